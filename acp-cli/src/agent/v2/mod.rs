//! `acp agent --protocol 2`: the reference agent speaking ACP v2 (Preview; feature
//! `unstable_protocol_v2`), deterministic and offline, on acp-tokio's
//! [`tokio_v2::serve`].
//!
//! [`ReferenceAgent`] answers a client that offers version 2 (a client offering only 1 gets
//! `-32022`, unsupported protocol version, for its `initialize`: run `acp agent` without `--protocol` for it):
//!
//! | request | answer |
//! |---|---|
//! | `initialize` | `protocolVersion: 2`; `capabilities.session` with `systemPrompt` and `prompt.image`; no `authMethods`; `info` names `acp-reference-agent` |
//! | `session/new` | a fresh `sessionId` (`sess-1`, `sess-2`, …); a relative `cwd` is `-32602`; a `systemPrompt` in `append` mode is kept (its text blocks joined by spaces: SYSTEM), another mode or one without text is `-32602`; with [`AgentConfig::max_sessions`] sessions open, `-32603` with `data.reason` [`TOO_MANY_SESSIONS`](super::TOO_MANY_SESSIONS) |
//! | `session/prompt` | acknowledged at once with `messageId` `user-N`; the turn then runs as below, or, while a turn of the session runs, the prompt joins it (see step 3). An unknown or closed session is `-32002`; a turn joined [`MAX_JOINED`] times answers `-32603` |
//! | `session/cancel` | the session's running turn ends: its tool call `cancelled`, then `idle` with `stopReason: cancelled` |
//! | `session/close` | `{}`: the session is forgotten and its running turn ends as after `session/cancel`; an unknown or closed session is `-32002` |
//! | `auth/login`, `auth/logout` | `-32601`: the agent advertises no authentication method, so there is nothing to log in to |
//! | any other method | `-32601` (acp-tokio's default); unknown notifications are ignored |
//!
//! A prompt turn, with TEXT the prompt's text blocks joined by spaces, PATH the first
//! whitespace-separated word of TEXT that is an absolute path and N a counter of the agent.
//! Every update is an upsert keyed by its id (the message's `messageId`, the tool call's
//! `toolCallId`, the plan's `planId`): a later one with the same id extends (chunks) or replaces
//! (fields it sets) the earlier one. The texts are those of the v1 agent's turn (`script`):
//!
//! 1. `user_message` `user-N` (the prompt's text blocks joined, as one text block: where the
//!    prompt went in the session's history), then `state_update` `running`;
//! 2. `agent_message_chunk` `echo: TEXT` (message `agent-N`); in a session given a
//!    `systemPrompt`, a second chunk of the same message, `\nsystem prompt: SYSTEM`;
//! 3. if TEXT contains the word `slow`, the turn stays open for [`AgentConfig::slow_delay`]
//!    unless it is cancelled. A prompt that joins the turn (JOINED, its `user-M`) is taken
//!    here at once, or before the turn goes `idle` when it comes later: `user_message` `user-M`,
//!    then a chunk `\nsteered: JOINED` of the message `agent-N` (the words of the v1 agent's
//!    `_session/steering`);
//! 4. `agent_thought_chunk` (message `thought-N`), then `plan_update` (plan `plan-N`: reading
//!    PATH `in_progress`, reporting `pending`);
//! 5. `tool_call_update` `call-N` (`pending`, `kind: read`, its title, `locations: [PATH]` when
//!    there is a PATH, `rawInput`), then one `session/request_permission` about it (subject the
//!    tool call, options `allow-once` and `reject-once`):
//!    * rejected: `call-N` `failed` with `Rejected by the user.`, then `idle` `end_turn`;
//!    * cancelled (or `session/cancel` or `session/close` at any point): `call-N` `cancelled`
//!      (when it was sent), then `idle` `cancelled`;
//!    * allowed: `call-N` `in_progress`, then `completed` with a note as content (v2 has no
//!      `fs/*`, so the agent does not read PATH: the note says whether it exists and that it
//!      stays unread), `plan-N` again with both steps `completed`, a last chunk `done` of the
//!      message `agent-N`, then `idle` `end_turn`.
//!
//! The v1 agent's `/status`, `elicit`, `link` and `news` steps and its optional `--history`
//! are not part of the v2 agent. It logs a line per request to stderr, never to stdout, and
//! [`ReferenceAgent::serve_stdio`] returns as soon as stdin ends.

mod turn;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use acp_proto::RpcError;
use acp_proto::types::SystemPromptMode;
use acp_proto::v2::{self, SessionId};
use acp_tokio::v2 as tokio_v2;
use acp_tokio::{AgentOptions, Error};
use serde_json::json;
use tokio::sync::watch;

use super::AgentConfig;
use super::sessions::Sessions;

/// Prompts one turn takes in besides its own; one more is answered `-32603`.
pub const MAX_JOINED: usize = 64;

/// The v2 reference agent. See the [module docs](self) for what it does.
#[derive(Debug, Clone)]
pub struct ReferenceAgent {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: AgentConfig,
    sessions: Sessions,
    /// Per open session: set to stop its running turn (`session/cancel`, `session/close`).
    stops: Mutex<HashMap<SessionId, watch::Sender<bool>>>,
    /// Per session with a running turn: where a prompt that joins it goes (its text, its N).
    running: Mutex<HashMap<SessionId, tokio::sync::mpsc::Sender<(String, u64)>>>,
    counter: AtomicU64,
}

impl Default for ReferenceAgent {
    fn default() -> ReferenceAgent {
        ReferenceAgent::with_config(AgentConfig::default())
    }
}

impl ReferenceAgent {
    /// An agent with the given settings (`history` is not used by the v2 agent).
    pub fn with_config(config: AgentConfig) -> ReferenceAgent {
        let sessions = Sessions::new(config.max_sessions);
        let inner =
            Inner { config, sessions, stops: Mutex::default(), running: Mutex::default(), counter: AtomicU64::new(0) };
        ReferenceAgent { inner: Arc::new(inner) }
    }

    fn log(&self, message: std::fmt::Arguments<'_>) {
        super::log(self.inner.config.log, message);
    }

    fn next(&self) -> u64 {
        self.inner.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn stops(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, watch::Sender<bool>>> {
        self.inner.stops.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, tokio::sync::mpsc::Sender<(String, u64)>>> {
        self.inner.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The prompt `text` joins the session's running turn: `Some` with its answer when a turn
    /// runs (the acknowledgement, or `-32603` past [`MAX_JOINED`]), `None` when none does.
    fn join(&self, session: &SessionId, text: &str) -> Option<Result<v2::PromptResponse, RpcError>> {
        let mut running = self.running();
        let turn = running.get(session)?;
        let n = self.next();
        match turn.try_send((text.to_owned(), n)) {
            Ok(()) => {
                self.log(format_args!("prompt on {session} joined its running turn: {text:?}"));
                Some(Ok(v2::PromptResponse::new(format!("user-{n}"))))
            }
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => {
                Some(Err(RpcError::internal_error("the running turn was joined as often as it takes")))
            }
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {
                running.remove(session);
                None
            }
        }
    }

    /// Stops the session's running turn, if any.
    fn stop(&self, session: &SessionId) {
        if let Some(stop) = self.stops().get(session) {
            let _ = stop.send(true);
        }
    }

    /// Serves the agent over any byte transport until its input ends.
    pub async fn serve(
        self,
        reader: impl tokio::io::AsyncRead + Send + 'static,
        writer: impl tokio::io::AsyncWrite + Send + 'static,
    ) -> Result<(), Error> {
        // acp-tokio runs each handler as a task; the core's budget bounds what is in flight.
        tokio_v2::serve(self, reader, writer, AgentOptions::default()).await
    }

    /// Serves the agent on stdin and stdout until stdin ends (on a runtime of its own).
    pub fn serve_stdio(self) -> Result<(), Error> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(Error::Io)?;
        runtime.block_on(self.serve(tokio::io::stdin(), tokio::io::stdout()))
    }
}

/// The text blocks of a v2 prompt (or system prompt) joined by spaces.
pub fn prompt_text_v2(prompt: &[v2::ContentBlock]) -> String {
    let texts: Vec<&str> = prompt
        .iter()
        .filter_map(|b| match b {
            v2::ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(" ")
}

/// The text of an `append` system prompt; `-32602` for another mode or one without text.
fn system_prompt_text(system: &v2::SystemPrompt) -> Result<String, RpcError> {
    if system.mode != SystemPromptMode::Append {
        let mode = system.mode.as_str();
        return Err(RpcError::invalid_params(format!("systemPrompt mode `{mode}` is not supported (only append)")));
    }
    let text = prompt_text_v2(&system.content);
    if text.is_empty() {
        return Err(RpcError::invalid_params("systemPrompt has no text"));
    }
    Ok(text)
}

impl tokio_v2::Agent for ReferenceAgent {
    async fn initialize(
        &self,
        request: v2::InitializeRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::InitializeResponse, RpcError> {
        let (client, asked) = (request.info.name, request.protocol_version.0);
        self.log(format_args!("initialize from {client} (asked for protocol version {asked}; v2)"));
        let info = v2::Implementation {
            title: Some("acp-rs reference agent (v2)".to_owned()),
            ..v2::Implementation::new("acp-reference-agent", env!("CARGO_PKG_VERSION"))
        };
        let mut answer = v2::InitializeResponse::new(v2::ProtocolVersion::V2, info);
        answer.capabilities.session = Some(v2::SessionCapabilities {
            system_prompt: Some(v2::SessionSystemPromptCapabilities::default()),
            prompt: Some(v2::PromptCapabilities {
                image: Some(v2::PromptImageCapabilities::default()),
                ..Default::default()
            }),
            ..Default::default()
        });
        Ok(answer)
    }

    async fn new_session(
        &self,
        request: v2::NewSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::NewSessionResponse, RpcError> {
        let cwd = request.cwd.0;
        if !Path::new(&cwd).is_absolute() {
            return Err(RpcError::invalid_params(format!("cwd must be an absolute path, got `{cwd}`"))
                .with_data(json!({ "reason": "cwd must be an absolute path", "cwd": cwd })));
        }
        let system_prompt = request.system_prompt.as_ref().map(system_prompt_text).transpose()?;
        let id = self.inner.sessions.open(system_prompt)?;
        self.stops().insert(id.clone(), watch::Sender::new(false));
        self.log(format_args!("session {id} opened in {cwd}"));
        Ok(v2::NewSessionResponse::new(id))
    }

    async fn close_session(
        &self,
        request: v2::CloseSessionRequest,
        _: tokio_v2::AgentContext,
    ) -> Result<v2::CloseSessionResponse, RpcError> {
        self.inner.sessions.close(&request.session_id)?;
        self.stop(&request.session_id);
        self.stops().remove(&request.session_id);
        self.log(format_args!("session {} closed", request.session_id));
        Ok(v2::CloseSessionResponse::default())
    }

    async fn prompt(
        &self,
        request: v2::PromptRequest,
        cx: tokio_v2::AgentContext,
    ) -> Result<v2::PromptResponse, RpcError> {
        self.inner.sessions.get(&request.session_id)?;
        let text = prompt_text_v2(&request.prompt);
        if let Some(joined) = self.join(&request.session_id, &text) {
            return joined;
        }
        let stop = {
            let stops = self.stops();
            let stop = stops.get(&request.session_id).ok_or_else(|| RpcError::internal_error("no stop signal"))?;
            stop.send_replace(false);
            stop.subscribe()
        };
        self.log(format_args!("prompt on {}: {text:?}", request.session_id));
        let n = self.next();
        let system = self.inner.sessions.system_prompt(&request.session_id).map(|s| s.to_string());
        let (joins, joined) = tokio::sync::mpsc::channel(MAX_JOINED);
        self.running().insert(request.session_id.clone(), joins);
        let (this, leaving) = (self.clone(), request.session_id.clone());
        // The turn leaves the map (so that a later prompt opens a turn of its own) before it
        // takes the last joined prompts and goes idle.
        let leave = Box::new(move || {
            this.running().remove(&leaving);
        });
        let script = turn::Turn { session: request.session_id, text, system, n, stop, cx, joined, leave: Some(leave) };
        let this = self.clone();
        tokio::spawn(async move {
            let (session, stop, error) = script.run(this.inner.config.slow_delay).await;
            let why = error.map(|e| format!(" ({e})")).unwrap_or_default();
            this.log(format_args!("turn on {session} ended {}{why}", stop.as_str()));
        });
        Ok(v2::PromptResponse::new(format!("user-{n}")))
    }

    async fn session_cancelled(&self, notification: v2::CancelSessionNotification) {
        self.log(format_args!("session/cancel of {}", notification.session_id));
        self.stop(&notification.session_id);
    }

    /// `_test/echo` answers its params verbatim, as the v1 agent's; other extension methods
    /// are unknown (`-32601`).
    async fn ext_method(
        &self,
        method: &str,
        params: serde_json::Value,
        _: tokio_v2::AgentContext,
    ) -> Result<serde_json::Value, RpcError> {
        match method {
            crate::agent::ECHO_METHOD => Ok(params),
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}
