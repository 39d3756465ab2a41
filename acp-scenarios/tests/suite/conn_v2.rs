//! [`Conn`] and [`Turn`] for both adapters' v2 clients (feature `unstable_protocol_v2`). A v2
//! turn's `state_update`s (`running`, the closing `idle`) are not updates to the scenarios:
//! the idle's `stopReason` is the turn's [`Stop`].

use std::sync::Arc;
use std::time::Duration;

use acp_scenarios::v2::chunk_text;
use acp_tokio::Error;
use acp_tokio::acp_proto::TurnEndReason;
use acp_tokio::acp_proto::v2::{self, SessionUpdate, UpdateSessionNotification};
use serde_json::Value;

use crate::conn::{BlockingPromptTurn, BlockingTurn, Conn, Stop, Turn, off_thread};

/// A v2 update as the scenarios read it: `None` for a `state_update`, else its text.
fn v2_text(update: &UpdateSessionNotification) -> Option<String> {
    match &update.update {
        SessionUpdate::StateUpdate(_) => None,
        other => Some(chunk_text(other).map_or_else(|| format!("non-text update {other:?}"), str::to_owned)),
    }
}

/// How a v2 turn ended, in the scenarios' words.
fn v2_stop(end: TurnEndReason) -> Stop {
    match end {
        TurnEndReason::Idle { stop_reason: Some(v2::IdleStopReason::EndTurn) } => Stop::EndTurn,
        TurnEndReason::Idle { stop_reason: Some(v2::IdleStopReason::Cancelled) } => Stop::Cancelled,
        other => Stop::Other(format!("{other:?}")),
    }
}

fn v2_init() -> v2::InitializeRequest {
    v2::InitializeRequest {
        protocol_version: v2::ProtocolVersion(2),
        info: v2::Implementation::new("acp-scenarios", "0"),
        capabilities: v2::ClientCapabilities::default(),
        meta: None,
    }
}

fn v2_info(init: v2::InitializeResponse) -> crate::conn::AgentInfo {
    crate::conn::AgentInfo { version: init.protocol_version.0, name: Some(init.info.name) }
}

fn v2_new_session() -> v2::NewSessionRequest {
    v2::NewSessionRequest {
        cwd: v2::AbsolutePath("/tmp".into()),
        additional_directories: None,
        mcp_servers: None,
        system_prompt: None,
        meta: None,
    }
}

fn v2_prompt(session: &str, text: &str) -> v2::PromptRequest {
    let prompt = vec![v2::ContentBlock::Text(v2::TextContent::new(text))];
    v2::PromptRequest { session_id: session.to_owned().into(), prompt, idempotency_key: None, meta: None }
}

const V2_PROMPT_CANCELLED: &str = "cancelled prompt session/cancel";

impl Conn for acp_tokio::v2::ClientConnection {
    type Turn = acp_tokio::v2::PromptTurn;
    const VERSION: u16 = 2;
    const PROMPT_CANCELLED: &'static str = V2_PROMPT_CANCELLED;

    /// v2 has no client-side `fs/*` or `terminal/*`: `services` advertises nothing.
    async fn initialize(&self, _services: bool) -> Result<crate::conn::AgentInfo, Error> {
        acp_tokio::v2::ClientConnection::initialize(self, v2_init()).await.map(v2_info)
    }

    async fn new_session(&self) -> Result<String, Error> {
        let session = acp_tokio::v2::ClientConnection::new_session(self, v2_new_session()).await?;
        Ok(session.session_id.to_string())
    }

    async fn prompt(&self, session: &str, text: &str) -> Result<Self::Turn, Error> {
        acp_tokio::v2::ClientConnection::prompt(self, v2_prompt(session, text)).await
    }

    async fn cancel(&self, session: &str) -> Result<(), Error> {
        acp_tokio::v2::ClientConnection::cancel(self, &session.to_owned().into()).await
    }

    async fn notify_cancel(&self, session: &str) -> Result<(), Error> {
        let cancel = v2::CancelSessionNotification::new(session.to_owned());
        acp_tokio::v2::ClientConnection::notify(self, cancel).await
    }

    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        acp_tokio::v2::ClientConnection::ext_method(self, method, params).await
    }

    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error> {
        self.with_timeout(timeout).ext_method(method, params).await
    }

    async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        acp_tokio::v2::ClientConnection::ext_notification(self, method, params).await
    }

    fn negotiated_version(&self) -> Option<u16> {
        self.negotiated().map(|n| n.protocol_version.0)
    }

    async fn close(&self) -> Result<(), Error> {
        acp_tokio::v2::ClientConnection::close(self).await.map(drop)
    }
}

impl Turn for acp_tokio::v2::PromptTurn {
    async fn next_update(&mut self) -> Option<String> {
        loop {
            if let Some(text) = v2_text(&acp_tokio::v2::PromptTurn::next_update(self).await?) {
                return Some(text);
            }
        }
    }

    async fn next_update_then<R: Send + 'static>(
        &mut self,
        handle: impl FnOnce(String) -> R + Send + 'static,
    ) -> Option<R> {
        let mut handle = Some(handle);
        loop {
            let handled = acp_tokio::v2::PromptTurn::next_update_then(self, |update| {
                v2_text(&update).map(|text| handle.take().expect("handled once")(text))
            });
            if let Some(result) = handled.await? {
                return Some(result);
            }
        }
    }

    async fn cancel(&self) -> Result<(), Error> {
        acp_tokio::v2::PromptTurn::cancel(self).await
    }

    async fn finish(self) -> Result<Stop, Error> {
        acp_tokio::v2::PromptTurn::finish(self).await.map(v2_stop)
    }
}

/// acp-blocking's v2 client connection, shared with the threads its calls run on.
pub(crate) struct BlockingConnV2(pub(crate) Arc<acp_blocking::v2::ClientConnection>);

impl BlockingConnV2 {
    /// A clone of the connection, to move to a call's thread.
    fn conn(&self) -> acp_blocking::v2::ClientConnection {
        (*self.0).clone()
    }
}

impl Conn for BlockingConnV2 {
    type Turn = BlockingTurn<acp_blocking::v2::PromptTurn>;
    const VERSION: u16 = 2;
    const PROMPT_CANCELLED: &'static str = V2_PROMPT_CANCELLED;

    async fn initialize(&self, _services: bool) -> Result<crate::conn::AgentInfo, Error> {
        let conn = self.conn();
        off_thread(move || conn.initialize(v2_init()).map(v2_info)).await
    }

    async fn new_session(&self) -> Result<String, Error> {
        let conn = self.conn();
        off_thread(move || conn.new_session(v2_new_session()).map(|s| s.session_id.to_string())).await
    }

    async fn prompt(&self, session: &str, text: &str) -> Result<Self::Turn, Error> {
        let (conn, request) = (self.conn(), v2_prompt(session, text));
        let turn = off_thread(move || conn.prompt(request)).await?;
        let (conn, session) = (self.conn(), v2::SessionId::from(session.to_owned()));
        Ok(BlockingTurn::start(turn, Arc::new(move || conn.cancel(&session))))
    }

    async fn cancel(&self, session: &str) -> Result<(), Error> {
        let (conn, session) = (self.conn(), v2::SessionId::from(session.to_owned()));
        off_thread(move || conn.cancel(&session)).await
    }

    async fn notify_cancel(&self, session: &str) -> Result<(), Error> {
        let (conn, cancel) = (self.conn(), v2::CancelSessionNotification::new(session.to_owned()));
        off_thread(move || conn.notify(cancel)).await
    }

    async fn ext_method(&self, method: &str, params: Value) -> Result<Value, Error> {
        let (conn, method) = (self.conn(), method.to_owned());
        off_thread(move || conn.ext_method(&method, params)).await
    }

    async fn ext_method_within(&self, timeout: Duration, method: &str, params: Value) -> Result<Value, Error> {
        let (conn, method) = (self.conn().with_timeout(timeout), method.to_owned());
        off_thread(move || conn.ext_method(&method, params)).await
    }

    async fn ext_notification(&self, method: &str, params: Value) -> Result<(), Error> {
        let (conn, method) = (self.conn(), method.to_owned());
        off_thread(move || conn.ext_notification(&method, params)).await
    }

    fn negotiated_version(&self) -> Option<u16> {
        self.0.negotiated().map(|n| n.protocol_version.0)
    }

    async fn close(&self) -> Result<(), Error> {
        let conn = self.0.clone();
        off_thread(move || conn.close().map(drop)).await
    }
}

impl BlockingPromptTurn for acp_blocking::v2::PromptTurn {
    fn next_text(&mut self) -> Option<String> {
        loop {
            if let Some(text) = v2_text(&self.next_update()?) {
                return Some(text);
            }
        }
    }

    fn next_text_then<R>(&mut self, handle: impl FnOnce(String) -> R) -> Option<R> {
        let mut handle = Some(handle);
        loop {
            let handled =
                self.next_update_then(|update| v2_text(&update).map(|text| handle.take().expect("once")(text)));
            if let Some(result) = handled? {
                return Some(result);
            }
        }
    }

    fn finish_stop(self) -> Result<Stop, Error> {
        self.finish().map(v2_stop)
    }
}
