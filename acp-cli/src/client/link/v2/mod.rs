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
//! * The agent's commands that v2 says in the answers to `session/new` and `session/resume`
//!   are drawn as v1's `available_commands_update`; config options are v1's (`configId` is
//!   v1's `id`).
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
use acp_blocking::{Client as _, ClientOptions, Error};
use serde_json::{Value, json};

use super::{Link, Turn};
use crate::client::handler::CliClient;
use shape::{config_options, reshape};
pub(crate) use upsert::Upserts;

/// A v2 connection, the ids its turns drew, and the client's handlers (which draw what the
/// answers carry that v1 says in updates).
struct V2Link {
    conn: ClientConnection,
    upserts: Arc<Mutex<Upserts>>,
    client: CliClient,
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
    let handlers = handler::V2Client { client: client.clone(), upserts: upserts.clone() };
    let conn = ClientConnection::connect(handlers, reader, writer, options)?;
    Ok(Arc::new(V2Link { conn, upserts, client }))
}

impl V2Link {
    /// The agent's commands that v2 says in an answer (`session/new`, `session/resume`),
    /// drawn as v1's `available_commands_update` of `session`, which the session takes as it
    /// takes v1's.
    fn commands(&self, session: &SessionId, commands: Option<&Vec<v2::AvailableCommand>>) {
        let Some(commands) = commands else { return };
        let Ok(commands) = reshape::<_, Vec<AvailableCommand>>(commands) else { return };
        let update = SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(commands));
        self.client.session_update(SessionNotification::new(session.clone(), update));
    }

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
            "capabilities": {
                "elicitation": request.client_capabilities.elicitation,
                // v1's flag; v2's an object.
                "auth": { "terminal": request.client_capabilities.auth.terminal.then(|| json!({})) },
            },
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
                self.commands(&answer.session_id, answer.available_commands.as_ref());
                let mut response = NewSessionResponse::new(answer.session_id.clone());
                response.config_options = answer.config_options.as_deref().map(config_options);
                Ok(response)
            }
            _ => Err(Error::UnexpectedResponse),
        }
    }

    fn load_session(&self, _: LoadSessionRequest, _: Duration) -> Result<LoadSessionResponse, Error> {
        Err(unsupported("session/load", "v2"))
    }

    fn resume_session(&self, request: ResumeSessionRequest, timeout: Duration) -> Result<ResumeSessionResponse, Error> {
        let mut resume = v2::ResumeSessionRequest::new(request.session_id.clone(), request.cwd);
        resume.meta = request.meta;
        match self.ask(resume, timeout)? {
            v2::AgentResponse::ResumeSession(answer) => {
                self.commands(&request.session_id, answer.available_commands.as_ref());
                let config_options = answer.config_options.as_deref().map(config_options);
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
        let set = config_setting(request)?;
        match self.ask(set, timeout)? {
            v2::AgentResponse::SetSessionConfigOption(answer) => {
                Ok(SetSessionConfigOptionResponse::new(config_options(&answer.config_options)))
            }
            _ => Err(Error::UnexpectedResponse),
        }
    }

    fn prompt(&self, request: PromptRequest) -> Result<Box<dyn Turn>, Error> {
        self.upserts.lock().unwrap_or_else(PoisonError::into_inner).begin_turn();
        let prompt = v2::PromptRequest {
            session_id: request.session_id,
            prompt: reshape(&request.prompt).map_err(|_| unsendable("a prompt block"))?,
            idempotency_key: None,
            meta: request.meta,
        };
        let turn = self.conn.prompt(prompt)?;
        Ok(Box::new(V2Turn { turn, upserts: self.upserts.clone(), idle_error: None }))
    }

    fn cancel(&self, session: &SessionId) -> Result<(), Error> {
        self.conn.cancel(session)
    }

    fn steer(&self, session: &SessionId, text: &str, timeout: Duration) -> Result<String, String> {
        let prompt = vec![v2::ContentBlock::Text(v2::TextContent::new(text))];
        let request = v2::PromptRequest { session_id: session.clone(), prompt, idempotency_key: None, meta: None };
        match self.conn.request(request, Some(timeout)) {
            Ok(_) => Ok("injected".to_owned()),
            Err(e) => Err(e.to_string()),
        }
    }

    fn close(&self) {
        let _ = self.conn.close();
    }

    fn version(&self) -> u16 {
        2
    }

    fn always_steerable(&self) -> bool {
        true
    }

    fn serves_files(&self) -> bool {
        false
    }
}

/// v2's `session/set_config_option` of v1's: v1 writes a select's value without a `type`, v2
/// tags both kinds (`id`, `boolean`).
fn config_setting(request: SetSessionConfigOptionRequest) -> Result<v2::SetSessionConfigOptionRequest, Error> {
    let value = match request.value {
        SessionConfigOptionValue::Boolean(value) => {
            v2::SessionConfigOptionValue::Boolean(v2::ConfigBooleanSetting { value })
        }
        SessionConfigOptionValue::ValueId(value) => {
            let value = reshape(&value).map_err(|_| unsendable("a config value"))?;
            v2::SessionConfigOptionValue::Id(v2::ConfigValueIdSetting { value })
        }
    };
    Ok(v2::SetSessionConfigOptionRequest {
        session_id: request.session_id,
        config_id: reshape(&request.config_id).map_err(|_| unsendable("a config option id"))?,
        value,
        meta: request.meta,
    })
}

/// The error of a request the session made that v2 has no form for (nothing is sent).
fn unsendable(what: &str) -> Error {
    Error::Io(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{what} that ACP v2 cannot carry")))
}

/// A v2 turn: its updates as the v1 updates that draw them, until `idle`.
struct V2Turn {
    turn: PromptTurn,
    upserts: Arc<Mutex<Upserts>>,
    /// The error an `idle` update with the `error` stop reason carried.
    idle_error: Option<v2::Error>,
}

impl Turn for V2Turn {
    fn next_update_then(&mut self, forward: &mut dyn FnMut(SessionUpdate) -> bool) -> Option<bool> {
        let (upserts, idle_error) = (&self.upserts, &mut self.idle_error);
        self.turn.next_update_then(|notification| {
            if let v2::SessionUpdate::StateUpdate(v2::StateUpdate::Idle(idle)) = &notification.update {
                *idle_error = idle.error.clone();
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

/// The v1 stop reason of a v2 `idle`; an `error` stop is the turn's error: the agent's own
/// (its code and data kept, its message saying the turn ended so), or `-32603` when it gave none.
fn stop_of(stop: v2::IdleStopReason, error: Option<v2::Error>) -> Result<StopReason, Error> {
    let value = serde_json::to_value(&stop).unwrap_or(Value::Null);
    if value == "error" {
        let mut error = error
            .and_then(|e| reshape::<_, RpcError>(&e).ok())
            .unwrap_or_else(|| RpcError::internal_error("no error given"));
        error.message = format!("its turn ended with an error: {}", error.message);
        return Err(Error::Rpc(error));
    }
    serde_json::from_value(value).map_err(|_| Error::UnexpectedResponse)
}

/// The error of a method v2 does not have (a local one: nothing is sent), saying so.
pub(crate) fn unsupported(method: &str, version: &str) -> Error {
    Error::Io(std::io::Error::new(std::io::ErrorKind::Unsupported, format!("ACP {version} has no {method}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_to_initialize_reads_as_v1s() {
        let answer: v2::InitializeResponse = serde_json::from_value(json!({
            "protocolVersion": 2,
            "info": {"name": "agent", "title": "An agent", "version": "3"},
            "capabilities": {"session": {"prompt": {"image": {}}}},
            "authMethods": [{"type": "agent", "methodId": "m1", "name": "Sign in"}],
        }))
        .expect("a v2 answer");
        let hello = hello(answer);
        assert_eq!(hello.protocol_version.0, 2);
        assert_eq!(hello.agent_info.as_ref().map(|i| i.name.as_str()), Some("agent"));
        let caps = &hello.agent_capabilities;
        assert!(caps.supports_image() && !caps.supports_audio() && !caps.supports_embedded_context());
        assert!(caps.supports_resume_session() && caps.supports_list_sessions(), "v2 has both without a capability");
        assert!(!caps.supports_load_session(), "v2 has no session/load");
        assert_eq!(hello.auth_methods.iter().filter_map(AuthMethod::id).collect::<Vec<_>>(), ["m1"]);
    }

    #[test]
    fn config_options_read_as_v1s() {
        let answer: v2::NewSessionResponse = serde_json::from_value(json!({"sessionId": "s", "configOptions": [
            {"configId": "model", "name": "Model", "type": "select", "currentValue": "fast",
             "options": [{"value": "fast", "name": "Fast"}, {"value": "deep", "name": "Deep"}]},
            {"configId": "plan", "name": "Plan first", "type": "boolean", "currentValue": true},
        ]}))
        .expect("a v2 answer");
        let options = config_options(answer.config_options.as_deref().unwrap_or_default());
        let ids: Vec<&str> = options.iter().map(|o| o.id.0.as_ref()).collect();
        assert_eq!(ids, ["model", "plan"]);
    }

    #[test]
    fn a_session_list_reads_as_v1s() {
        let answer: v2::ListSessionsResponse = serde_json::from_value(json!({"sessions": [
            {"sessionId": "s-1", "cwd": "/p", "title": "First", "updatedAt": "2026-12-07T10:00:00Z"},
        ], "nextCursor": "c2"}))
        .expect("a v2 answer");
        let list: ListSessionsResponse = reshape(&answer).expect("a v1 form");
        assert_eq!(list.sessions[0].session_id.0.as_ref(), "s-1");
        assert_eq!(list.sessions[0].title.as_deref(), Some("First"));
        assert!(list.next_cursor.is_some());
    }

    #[test]
    fn a_prompts_blocks_and_a_config_value_take_v2s_shape() {
        let blocks = vec![
            ContentBlock::text("look"),
            serde_json::from_value(json!({"type": "image", "mimeType": "image/png", "data": "AAAA"})).unwrap(),
            serde_json::from_value(json!({"type": "resource_link", "uri": "file:///a.rs", "name": "a.rs"})).unwrap(),
            serde_json::from_value(
                json!({"type": "resource", "resource": {"uri": "file:///b.rs", "text": "fn b() {}"}}),
            )
            .unwrap(),
        ];
        let v2_blocks: Vec<v2::ContentBlock> = reshape(&blocks).expect("every block has a v2 form");
        assert_eq!(serde_json::to_value(&v2_blocks).unwrap(), serde_json::to_value(&blocks).unwrap());
        // A select's value: v1 writes no `type`, v2 says `id`.
        let select = SetSessionConfigOptionRequest::new("s", "model", SessionConfigValueId::from("fast"));
        let toggle = SetSessionConfigOptionRequest::new("s", "plan", true);
        for (request, expected) in [
            (select, json!({"sessionId": "s", "configId": "model", "type": "id", "value": "fast"})),
            (toggle, json!({"sessionId": "s", "configId": "plan", "type": "boolean", "value": true})),
        ] {
            let set = config_setting(request).expect("a v2 form");
            assert_eq!(serde_json::to_value(&set).unwrap(), expected);
        }
    }
}
