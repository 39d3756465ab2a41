//! The client API the scenarios speak: [`Conn`] and [`Turn`], the calls both adapters' clients
//! have under the same names. acp-tokio's `ClientConnection` and `PromptTurn` implement them
//! directly; acp-blocking's run each blocking call on a thread of its own (a turn on one
//! worker thread), so a scenario awaits them like the async ones and several run at once.

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use acp_tokio::Error;
use acp_tokio::acp_proto::types::*;
use serde_json::Value;
use tokio::sync::oneshot;

/// A client connection, as the scenarios use it.
#[allow(async_fn_in_trait)]
pub(crate) trait Conn {
    /// A running prompt turn.
    type Turn: Turn;
    async fn initialize(&self, request: InitializeRequest) -> Result<InitializeResponse, Error>;
    async fn new_session(&self, request: NewSessionRequest) -> Result<NewSessionResponse, Error>;
    async fn prompt(&self, request: PromptRequest) -> Result<Self::Turn, Error>;
    async fn cancel(&self, session: &SessionId) -> Result<(), Error>;
    /// Dropping the future before it resolves cancels the request (`$/cancel_request`) on the
    /// async adapter; a blocking call cannot be abandoned (see
    /// `dropped_request_cancels_on_the_agent`).
    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error>;
    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error>;
    fn negotiated_version(&self) -> Option<ProtocolVersion>;
    async fn close(&self) -> Result<(), Error>;
}

/// A running prompt turn, as the scenarios use it. Dropping it cancels the turn.
#[allow(async_fn_in_trait)]
pub(crate) trait Turn {
    async fn next_update(&mut self) -> Option<SessionUpdate>;
    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(SessionUpdate) -> R + Send + 'static,
    ) -> Option<R>;
    async fn cancel(&self) -> Result<(), Error>;
    async fn finish(self) -> Result<StopReason, Error>;
}

impl Conn for acp_tokio::ClientConnection {
    type Turn = acp_tokio::PromptTurn;

    async fn initialize(&self, request: InitializeRequest) -> Result<InitializeResponse, Error> {
        acp_tokio::ClientConnection::initialize(self, request).await
    }

    async fn new_session(&self, request: NewSessionRequest) -> Result<NewSessionResponse, Error> {
        acp_tokio::ClientConnection::new_session(self, request).await
    }

    async fn prompt(&self, request: PromptRequest) -> Result<Self::Turn, Error> {
        acp_tokio::ClientConnection::prompt(self, request).await
    }

    async fn cancel(&self, session: &SessionId) -> Result<(), Error> {
        acp_tokio::ClientConnection::cancel(self, session).await
    }

    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        acp_tokio::ClientConnection::ext_method(self, method, params).await
    }

    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error> {
        self.with_timeout(timeout).ext_method(method, params).await
    }

    fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.negotiated().map(|n| n.protocol_version)
    }

    async fn close(&self) -> Result<(), Error> {
        acp_tokio::ClientConnection::close(self).await.map(drop)
    }
}

impl Turn for acp_tokio::PromptTurn {
    async fn next_update(&mut self) -> Option<SessionUpdate> {
        acp_tokio::PromptTurn::next_update(self).await
    }

    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(SessionUpdate) -> R + Send + 'static,
    ) -> Option<R> {
        acp_tokio::PromptTurn::next_update_then(self, handle).await
    }

    async fn cancel(&self) -> Result<(), Error> {
        acp_tokio::PromptTurn::cancel(self).await
    }

    async fn finish(self) -> Result<StopReason, Error> {
        acp_tokio::PromptTurn::finish(self).await
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
    type Turn = BlockingTurn;

    async fn initialize(&self, request: InitializeRequest) -> Result<InitializeResponse, Error> {
        let requester = self.requester();
        off_thread(move || requester.initialize(request)).await
    }

    async fn new_session(&self, request: NewSessionRequest) -> Result<NewSessionResponse, Error> {
        let requester = self.requester();
        off_thread(move || requester.new_session(request)).await
    }

    async fn prompt(&self, request: PromptRequest) -> Result<BlockingTurn, Error> {
        let requester = self.requester();
        let session = request.session_id.clone();
        let turn = off_thread(move || requester.prompt(request)).await?;
        Ok(BlockingTurn::start(turn, session, self.requester()))
    }

    async fn cancel(&self, session: &SessionId) -> Result<(), Error> {
        let (requester, session) = (self.requester(), session.clone());
        off_thread(move || requester.cancel(&session)).await
    }

    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        let (requester, method) = (self.requester(), method.to_owned());
        off_thread(move || requester.ext_method(&method, params)).await
    }

    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error> {
        let (requester, method) = (self.requester().with_timeout(timeout), method.to_owned());
        off_thread(move || requester.ext_method(&method, params)).await
    }

    fn negotiated_version(&self) -> Option<ProtocolVersion> {
        self.0.negotiated().map(|n| n.protocol_version)
    }

    async fn close(&self) -> Result<(), Error> {
        let conn = self.0.clone();
        off_thread(move || conn.close().map(drop)).await
    }
}

/// A job for a blocking turn's worker thread.
type Job = Box<dyn FnOnce(&mut Option<acp_blocking::PromptTurn>) + Send>;

/// acp-blocking's prompt turn, owned by a worker thread that runs the calls sent to it in
/// order. Dropping this drops the turn on that thread (which cancels it, as on acp-tokio).
pub(crate) struct BlockingTurn {
    jobs: mpsc::Sender<Job>,
    session: SessionId,
    requester: acp_blocking::Requester,
}

impl BlockingTurn {
    fn start(turn: acp_blocking::PromptTurn, session: SessionId, requester: acp_blocking::Requester) -> BlockingTurn {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::spawn(move || {
            let mut turn = Some(turn);
            while let Ok(job) = queue.recv() {
                job(&mut turn);
            }
        });
        BlockingTurn { jobs, session, requester }
    }

    async fn run<T: Send + 'static>(
        &self,
        job: impl FnOnce(&mut Option<acp_blocking::PromptTurn>) -> T + Send + 'static,
    ) -> T {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |turn| {
            let _ = tx.send(job(turn));
        });
        self.jobs.send(job).expect("the turn's thread");
        rx.await.expect("the turn's thread panicked (its message is above)")
    }
}

impl Turn for BlockingTurn {
    async fn next_update(&mut self) -> Option<SessionUpdate> {
        self.run(|turn| turn.as_mut().and_then(acp_blocking::PromptTurn::next_update)).await
    }

    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(SessionUpdate) -> R + Send + 'static,
    ) -> Option<R> {
        self.run(move |turn| turn.as_mut().and_then(|turn| turn.next_update_then(handle))).await
    }

    /// `PromptTurn::cancel` is `Requester::cancel` of the turn's session; it goes through the
    /// requester here because the worker may be blocked in `next_update`.
    async fn cancel(&self) -> Result<(), Error> {
        let (requester, session) = (self.requester.clone(), self.session.clone());
        off_thread(move || requester.cancel(&session)).await
    }

    async fn finish(self) -> Result<StopReason, Error> {
        self.run(|turn| turn.take().expect("a turn not finished yet").finish()).await
    }
}
