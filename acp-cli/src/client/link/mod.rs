//! The session's connection to its agent, whichever ACP version it speaks: one [`Link`] that
//! the session loop (`session/`: the loop and the slash commands) calls, with the version chosen once,
//! where the connection is made ([`open`]).
//!
//! The session speaks in v1's types, which are what it draws and records: a v1 connection
//! (`v1.rs`) passes them through; a v2 connection (`v2/`) maps each request into v2's and each
//! answer and update back (v2's upserts drawn as the v1 updates that draw them). What a
//! version has no method for is refused by the link (`-32601`), and the session
//! never offers it: v2 has no modes (its answers carry none), no `session/load` (its
//! capabilities never advertise it), no `fs/*` or `terminal/*` (the v2 client serves none).
//!
//! ```text
//! session loop ──► Arc<dyn Link> ──► v1: acp_blocking::ClientConnection
//!                                └─► v2: acp_blocking::v2::ClientConnection (+ upserts)
//! ```

mod v1;
#[cfg(feature = "unstable_protocol_v2")]
mod v2;

use std::sync::Arc;
use std::time::Duration;

use acp_blocking::acp_proto::types::*;
use acp_blocking::{ClientOptions, Error};

use super::handler::CliClient;

/// What the session asks of its agent. Every call blocks: the session runs them on helper
/// threads (`Session::call`), with `timeout` bounding the wait for the answer.
pub(crate) trait Link: Send + Sync {
    /// `initialize`; the answer as v1's, with the version the agent chose.
    fn initialize(&self, request: InitializeRequest, timeout: Duration) -> Result<InitializeResponse, Error>;
    /// `authenticate` (v2: `auth/login`).
    fn authenticate(&self, request: AuthenticateRequest, timeout: Duration) -> Result<(), Error>;
    /// `session/new`.
    fn new_session(&self, request: NewSessionRequest, timeout: Duration) -> Result<NewSessionResponse, Error>;
    /// `session/load` (v1 only).
    fn load_session(&self, request: LoadSessionRequest, timeout: Duration) -> Result<LoadSessionResponse, Error>;
    /// `session/resume`.
    fn resume_session(&self, request: ResumeSessionRequest, timeout: Duration) -> Result<ResumeSessionResponse, Error>;
    /// `session/list`.
    fn list_sessions(&self, request: ListSessionsRequest, timeout: Duration) -> Result<ListSessionsResponse, Error>;
    /// `session/set_mode` (v1 only).
    fn set_mode(&self, request: SetSessionModeRequest, timeout: Duration) -> Result<SetSessionModeResponse, Error>;
    /// `session/set_config_option`.
    fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
        timeout: Duration,
    ) -> Result<SetSessionConfigOptionResponse, Error>;
    /// Starts a turn: `session/prompt`, whose updates the [`Turn`] yields.
    fn prompt(&self, request: PromptRequest) -> Result<Box<dyn Turn>, Error>;
    /// Cancels the running turn of `session` (`session/cancel`), in order behind what was sent.
    fn cancel(&self, session: &SessionId) -> Result<(), Error>;
    /// Adds `text` to the running turn of `session`: v1 by the `_session/steering` extension,
    /// v2 by a prompt sent during the turn (which joins it). The outcome in the extension's
    /// words (`injected` when it was added), or the error in words.
    fn steer(&self, session: &SessionId, text: &str, timeout: Duration) -> Result<String, String>;
    /// Closes the connection (the agent's input).
    fn close(&self);
    /// The ACP version the link speaks (1 or 2).
    fn version(&self) -> u16 {
        1
    }
    /// Whether the agent may steer turns whatever it advertised (v2: a prompt joins the turn).
    fn always_steerable(&self) -> bool {
        false
    }
    /// Whether the version has the client serve `fs/*` and `terminal/*` (v2 has neither).
    fn serves_files(&self) -> bool {
        true
    }
}

/// A running turn, read on a thread of its own.
pub(crate) trait Turn: Send {
    /// Takes the next update to draw and gives it to `forward` before the agent's requests
    /// that came after it reach their handlers (so a question is drawn after the tool call it
    /// is about); `None` once the turn is over, else what `forward` returned.
    fn next_update_then(&mut self, forward: &mut dyn FnMut(SessionUpdate) -> bool) -> Option<bool>;
    /// How the turn ended, once [`next_update_then`](Self::next_update_then) said it is over.
    fn response(self: Box<Self>) -> Result<PromptResponse, Error>;
}

/// The connection the session runs over, for `version`, with `client` answering the agent.
pub(crate) fn open(
    version: crate::Protocol,
    client: CliClient,
    reader: Box<dyn std::io::Read + Send>,
    writer: Box<dyn std::io::Write + Send>,
) -> Result<Arc<dyn Link>, Error> {
    let mut options = ClientOptions::default();
    options.max_buffered = super::config::MAX_BUFFERED;
    #[cfg(feature = "unstable_protocol_v2")]
    if version == crate::Protocol::V2 {
        return v2::open(client, reader, writer, options);
    }
    let _ = version;
    Ok(Arc::new(acp_blocking::ClientConnection::connect(client, reader, writer, options)?))
}
