//! The v2 link (ACP v2 Preview, feature `unstable_protocol_v2`): acp-blocking's
//! [`v2::ClientConnection`](acp_blocking::v2::ClientConnection), with the session's v1 requests
//! mapped into v2's and the answers and updates back.
//!
//! * `initialize` offers version 2 and the client's elicitation capabilities (v2 has no
//!   `fs/*` or `terminal/*`); an agent that answers 1 gets
//!   [`Error::UnsupportedProtocolVersion`], which the session reports with what to do. The
//!   answer becomes v1's: `info` as `agentInfo`, the prompt capabilities as flags, and
//!   `session/resume` and `session/list` advertised (v2 has both without a capability);
//!   `session/load` never is.
//! * `authenticate` is `auth/login` of the same method id.
//! * A prompt is acknowledged, and the turn is its `session/update`s, drawn by id
//!   (`upsert.rs`), until the agent's `idle` `state_update`, whose stop reason is the turn's
//!   (an `error` stop is the turn's error). A prompt sent during a turn joins it: that is v2's
//!   steering.
//! * `session/set_mode` and `session/load` are refused here: the session never offers them.

mod handler;
mod shape;
mod upsert;

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{RpcError, TurnEndReason, v2};
use acp_blocking::v2::{ClientConnection, PromptTurn};
use acp_blocking::{ClientOptions, Error};
use serde_json::{Value, json};

use super::{Link, Turn};
use crate::client::handler::CliClient;
use shape::reshape;
pub(crate) use upsert::Upserts;

/// A v2 connection and the ids its turns drew.
struct V2Link {
    conn: ClientConnection,
    upserts: Arc<Mutex<Upserts>>,
}

/// Connects over `reader` and `writer`, with `client` (the v1 client's handlers) answering the
/// agent's v2 requests.
pub(super) fn open(
    client: CliClient,
    reader: Box<dyn std::io::Read + Send>,
    writer: Box<dyn std::io::Write + Send>,
    options: ClientOptions,
) -> Result<Arc<dyn Link>, Error> {
    let upserts = Arc::new(Mutex::new(Upserts::default()));
    let handlers = handler::V2Client { client, upserts: upserts.clone() };
    let conn = ClientConnection::connect(handlers, reader, writer, options)?;
    Ok(Arc::new(V2Link { conn, upserts }))
}

impl V2Link {
    fn ask(&self, request: impl Into<v2::ClientRequest>, timeout: Duration) -> Result<v2::AgentResponse, Error> {
        self.conn.request(request, Some(timeout))
    }
}

/// The v1 form of a v2 `initialize` answer.
fn hello(answer: v2::InitializeResponse) -> InitializeResponse {
    let mut response = InitializeResponse::new(ProtocolVersion(answer.protocol_version.0));
    response.agent_info = reshape(&answer.info).ok();
    let prompt = answer.capabilities.session.as_ref().and_then(|s| s.prompt.clone()).unwrap_or_default();
    let caps = &mut response.agent_capabilities;
    caps.prompt_capabilities.image = prompt.image.is_some();
    caps.prompt_capabilities.audio = prompt.audio.is_some();
    caps.prompt_capabilities.embedded_context = prompt.embedded_context.is_some();
    caps.load_session = false;
    caps.session_capabilities.resume = Some(Default::default());
    caps.session_capabilities.list = Some(Default::default());
    // v2 names a method `methodId` where v1 says `id`.
    let offered = answer.auth_methods.unwrap_or_default();
    let methods = offered.iter().filter_map(|method| {
        let mut value = serde_json::to_value(method).ok()?;
        let id = value.get("methodId").cloned()?;
        value["id"] = id;
        serde_json::from_value(value).ok()
    });
    response.auth_methods = methods.collect();
    response.meta = answer.meta;
    response
}

impl Link for V2Link {
    fn initialize(&self, request: InitializeRequest, timeout: Duration) -> Result<InitializeResponse, Error> {
        let info = request.client_info.as_ref().map_or_else(
            || json!({"name": "acp-cli", "version": env!("CARGO_PKG_VERSION")}),
            |info| json!({"name": info.name, "title": info.title, "version": info.version}),
        );
        let offer = json!({
            "protocolVersion": 2,
            "info": info,
            "capabilities": { "elicitation": request.client_capabilities.elicitation },
        });
        let init: v2::InitializeRequest = serde_json::from_value(offer).map_err(|_| Error::UnexpectedResponse)?;
        self.conn.with_timeout(timeout).initialize(init).map(hello)
    }

    fn authenticate(&self, request: AuthenticateRequest, timeout: Duration) -> Result<(), Error> {
        let login = v2::LoginAuthRequest::new(request.method_id.0.as_ref());
        self.ask(login, timeout).map(drop)
    }

    fn new_session(&self, request: NewSessionRequest, timeout: Duration) -> Result<NewSessionResponse, Error> {
        let new = v2::NewSessionRequest {
            cwd: v2::AbsolutePath(request.cwd),
            additional_directories: None,
            mcp_servers: None,
            system_prompt: None,
            meta: None,
        };
        match self.ask(new, timeout)? {
            v2::AgentResponse::NewSession(answer) => {
                let mut response = NewSessionResponse::new(answer.session_id.clone());
                response.config_options = answer.config_options.as_ref().and_then(|o| reshape(o).ok());
                Ok(response)
            }
            _ => Err(Error::UnexpectedResponse),
        }
    }

    fn load_session(&self, _: LoadSessionRequest, _: Duration) -> Result<LoadSessionResponse, Error> {
        Err(unsupported("session/load", "v2"))
    }

    fn resume_session(&self, request: ResumeSessionRequest, timeout: Duration) -> Result<ResumeSessionResponse, Error> {
        let mut resume = v2::ResumeSessionRequest::new(request.session_id, request.cwd);
        resume.meta = request.meta;
        match self.ask(resume, timeout)? {
            v2::AgentResponse::ResumeSession(answer) => {
                let config_options = answer.config_options.as_ref().and_then(|o| reshape(o).ok());
                Ok(ResumeSessionResponse { config_options, ..Default::default() })
            }
            _ => Err(Error::UnexpectedResponse),
        }
    }

    fn list_sessions(&self, request: ListSessionsRequest, timeout: Duration) -> Result<ListSessionsResponse, Error> {
        let list = v2::ListSessionsRequest {
            cwd: request.cwd.map(v2::AbsolutePath),
            cursor: request.cursor.map(Into::into),
            meta: None,
        };
        match self.ask(list, timeout)? {
            v2::AgentResponse::ListSessions(answer) => reshape(&answer),
            _ => Err(Error::UnexpectedResponse),
        }
    }

    fn set_mode(&self, _: SetSessionModeRequest, _: Duration) -> Result<SetSessionModeResponse, Error> {
        Err(unsupported("session/set_mode", "v2"))
    }

    fn set_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
        timeout: Duration,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let set: v2::SetSessionConfigOptionRequest = reshape(&request)?;
        match self.ask(set, timeout)? {
            v2::AgentResponse::SetSessionConfigOption(answer) => {
                Ok(SetSessionConfigOptionResponse::new(reshape::<_, Vec<SessionConfigOption>>(&answer.config_options)?))
            }
            _ => Err(Error::UnexpectedResponse),
        }
    }

    fn prompt(&self, request: PromptRequest) -> Result<Box<dyn Turn>, Error> {
        self.upserts.lock().unwrap_or_else(PoisonError::into_inner).begin_turn();
        let prompt = v2::PromptRequest {
            session_id: request.session_id,
            prompt: reshape(&request.prompt)?,
            idempotency_key: None,
            meta: request.meta,
        };
        let turn = self.conn.prompt(prompt)?;
        Ok(Box::new(V2Turn { turn, upserts: self.upserts.clone(), idle_error: None }))
    }

    fn cancel(&self, session: &SessionId) -> Result<(), Error> {
        self.conn.cancel(session)
    }

    fn steer(&self, session: &SessionId, text: &str) -> Result<String, String> {
        let prompt = vec![v2::ContentBlock::Text(v2::TextContent::new(text))];
        let request = v2::PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None };
        match self.conn.request(request, None) {
            Ok(_) => Ok("injected".to_owned()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn close(&self) {
        // Dropping the last clone closes it; the session drops its link at the end.
        let _ = self.conn.close();
    }

    fn always_steerable(&self) -> bool {
        true
    }

    fn serves_files(&self) -> bool {
        false
    }
}

/// A v2 turn: its updates as the v1 updates that draw them, until `idle`.
struct V2Turn {
    turn: PromptTurn,
    upserts: Arc<Mutex<Upserts>>,
    /// The error an `idle` update with the `error` stop reason carried.
    idle_error: Option<String>,
}

impl Turn for V2Turn {
    fn next_update_then(&mut self, forward: &mut dyn FnMut(SessionUpdate) -> bool) -> Option<bool> {
        let (upserts, idle_error) = (&self.upserts, &mut self.idle_error);
        self.turn.next_update_then(|notification| {
            if let v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle)) = &notification.update {
                *idle_error = idle.error.as_ref().map(|e| e.message.clone());
            }
            let update = upserts.lock().unwrap_or_else(PoisonError::into_inner).map(&notification.update);
            // An update not drawn (the turn's lifecycle) is passed over.
            update.is_none_or(&mut *forward)
        })
    }

    fn response(self: Box<Self>) -> Result<PromptResponse, Error> {
        let V2Turn { turn, idle_error, .. } = *self;
        let stop = match turn.finish()? {
            TurnEndReason::Idle { stop_reason } => {
                stop_reason.map_or(Ok(StopReason::EndTurn), |stop| stop_of(stop, idle_error))?
            }
            TurnEndReason::SessionClosed => StopReason::Cancelled,
            other => {
                return Err(Error::Rpc(RpcError::internal_error(format!("the turn ended without idle: {other:?}"))));
            }
        };
        Ok(PromptResponse::new(stop))
    }
}

/// The v1 stop reason of a v2 `idle`; an `error` stop is the turn's error, with the message the
/// agent gave.
fn stop_of(stop: v2::IdleStopReason, error: Option<String>) -> Result<StopReason, Error> {
    let value = serde_json::to_value(&stop).unwrap_or(Value::Null);
    if value == "error" {
        let why = error.unwrap_or_else(|| "no error given".to_owned());
        return Err(Error::Rpc(RpcError::internal_error(format!("the agent's turn ended with an error: {why}"))));
    }
    serde_json::from_value(value).map_err(|_| Error::UnexpectedResponse)
}

/// The error of a method the connection's version does not have (`-32601`, as an agent
/// without it would answer), saying so.
pub(crate) fn unsupported(method: &str, version: &str) -> Error {
    let mut error = RpcError::method_not_found(method);
    error.message = format!("ACP {version} has no {method}");
    Error::Rpc(error)
}
