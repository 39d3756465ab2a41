//! The v2 client: the [`Client`] and [`LocalClient`] handler traits (what a v2 agent asks
//! of the client), and the typed calls and constructors of [`ClientConnection`] (the one
//! `ClientConnection<P>`, as `ClientConnection<V2>`), the handle that drives a v2 agent.

use acp_proto::CloseReason;
use acp_proto::protocol::V2;
use acp_proto::v2;

use super::PromptTurn;
use crate::client::ClientConnection;
use crate::io::TokioIo;
use crate::runtime::Tokio;
use crate::{ClientOptions, Error};

pub use crate::generated::v2::client::Client;
pub use crate::generated::v2::client::LocalClient;
use crate::handlers::{LocalHandlers, SendHandlers};

impl ClientConnection<V2> {
    connect_fns!(Tokio(TokioIo, tokio::io), V2 {
        /// Connects to a v2 agent over `reader` (the agent's output) and `writer` (its input); the
        /// driver runs as a `tokio::spawn`ed task. Call [`initialize`](Self::initialize) first.
        fn connect<C: Client>(Send) => SendHandlers;
        /// [`connect`](Self::connect) for a [`LocalClient`]: must be called inside a
        /// `tokio::task::LocalSet`, where the driver and the handlers run.
        fn connect_local<C: LocalClient>() => LocalHandlers;
    });

    /// [`connect`](Self::connect) over any transport and runtime: the driver is spawned on
    /// `rt` (the remote transports connect through here).
    #[cfg(feature = "ws")]
    pub(crate) fn over<Rt: crate::runtime::Runtime, C: Client>(
        rt: Rt,
        client: C,
        reader: impl crate::io::ReadBytes + Send,
        writer: impl crate::io::WriteBytes + Send,
        options: ClientOptions,
    ) -> ClientConnection<V2> {
        Self::start(rt, SendHandlers::new(client), reader, writer, &options)
    }

    /// `initialize`, offering `request.protocol_version` (2 or later). An agent answering with
    /// version 1 gets [`Error::UnsupportedProtocolVersion`]`(1)` and the connection closes:
    /// this handle speaks v2 only (use [`crate::ClientConnection`] for v1).
    pub async fn initialize(&self, request: v2::InitializeRequest) -> Result<v2::InitializeResponse, Error> {
        match self.handle().request(request.into(), self.timeout()).await {
            Ok(v2::Response::Agent(v2::AgentResponse::Initialize(init))) => Ok(*init),
            Ok(_) => Err(Error::UnexpectedResponse),
            // An answer of another version does not decode as v2's, and the core closes the
            // connection naming the version (`CloseReason::UnsupportedProtocolVersion`).
            Err(Error::InvalidResult(e)) => {
                self.closed().await;
                match self.close_reason() {
                    Some(CloseReason::UnsupportedProtocolVersion { version }) => {
                        Err(Error::UnsupportedProtocolVersion(version))
                    }
                    _ => Err(Error::InvalidResult(e)),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Starts a turn: sends `session/prompt`. Resolves once the request went out (or was
    /// refused: [`SendError::TurnAlreadyRunning`](acp_proto::SendError::TurnAlreadyRunning) while
    /// a turn of the same session is open, which this client reads already or which no stream
    /// reads: a dropped turn the agent has not ended yet, or one opened by a `session/prompt`
    /// sent through [`request`](Self::request); the prompt would join that turn, and the new
    /// stream would miss its start). The [`PromptTurn`] yields the turn's
    /// updates and ends when the agent reports `idle` (or the prompt failed, or the connection
    /// closed).
    pub async fn prompt(&self, request: v2::PromptRequest) -> Result<PromptTurn, Error> {
        let session = request.session_id.clone();
        self.open_turn(session, request.into()).await
    }
}
