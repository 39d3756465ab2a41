//! `acp agent`: the reference agent, deterministic and offline.
//!
//! [`ReferenceAgent`] answers every request the way the protocol pages describe, and runs one
//! scripted prompt turn that touches every kind of update, a permission ask and a file read,
//! so that a client (ours, an SDK's, an editor's) can be checked against it:
//!
//! | request | answer |
//! |---|---|
//! | `initialize` | `protocolVersion: 1` whatever was asked; `loadSession: false`; `sessionCapabilities: {close: {}, systemPrompt: {}}`; prompts may carry images and embedded context, not audio; no MCP over HTTP or SSE; `authMethods: []`; `agentInfo` |
//! | `session/new` | a fresh `sessionId` (`sess-1`, `sess-2`, …); a relative `cwd` is `-32602`; a `systemPrompt` in `append` mode is kept (its text blocks joined by spaces: SYSTEM), another mode or one without text is `-32602`; with [`AgentConfig::max_sessions`] sessions open (default 1024), `-32603` with `data: {"reason": TOO_MANY_SESSIONS, "limit": N}` |
//! | `session/new` (also) | `modes` (`default`, `plan`) and `configOptions` (`mode`, category `mode`; `model`: `ref-small`, `ref-large`, category `model`), see [`modes`] |
//! | `session/set_mode`, `session/set_config_option` | the choice is recorded; a mode change also sends `current_mode_update` and `config_option_update`; an unknown mode, option or value is `-32602` |
//! | `session/close` | `{}`: the session is forgotten (its slot freed) and its running turn, if any, ends `cancelled`; an unknown or already closed session is `-32002` |
//! | `session/prompt` of an unknown or closed session | `-32002`, `data: {"reason": "unknown session", "sessionId": …}` |
//! | `session/load`, `session/resume`, `session/list` | only with [`AgentConfig::history`] (`--history DIR`), which also advertises `loadSession: true` and `sessionCapabilities.list` and `.resume`: see [`history`] |
//! | `_test/echo` | its params, verbatim |
//! | `_session/steering` | adds its prompt to the session's turn while it waits in step 2 ([`STEERING_METHOD`]); `{"outcome": "injected"}`, else `"failed"` |
//! | any other method | `-32601`; unknown notifications are ignored |
//!
//! A prompt turn, with TEXT the prompt's text blocks joined by spaces and PATH the first
//! whitespace-separated word of TEXT that is an absolute path:
//!
//! 1. `agent_message_chunk` `echo: TEXT`; in a session given a `systemPrompt`, then an
//!    `agent_message_chunk` `\nsystem prompt: SYSTEM`; if TEXT is the command `/status`, an
//!    `agent_message_chunk` `status: mode MODE, model MODEL`, and if it contains the word
//!    `commands`, an `available_commands_update` (advertising `status`); then `done` and
//!    `end_turn` (steps 2-7 are skipped);
//! 2. if TEXT contains the word `slow`, the turn stays open for [`AgentConfig::slow_delay`]
//!    (5 s) unless it is cancelled; meanwhile each `_session/steering` text of the session is
//!    an `agent_message_chunk` `\nsteered: TEXT`;
//! 3. if TEXT contains the word `elicit`, a form (`elicitation/create`, see [`form_schema`]:
//!    `name`, a required string of 1-40 characters, `count`, an integer from 1 to 10,
//!    `colour`, a choice, `subscribe`, a boolean, and `greeting`, a string with a default)
//!    when the client advertised `elicitation.form`, then an `agent_message_chunk` with what
//!    came back, then a newline: `form accepted: count=3 name="Ada"` (the fields in name
//!    order, as JSON values), `form declined`, `form cancelled`, or `no form: the client did
//!    not advertise elicitation.form`; then `done` and `end_turn` (steps 4-7 are skipped); else, if it
//!    contains the word `link`, a URL elicitation ([`LINK_URL`], id `link-N`) when the client
//!    advertised `elicitation.url`, an `elicitation/complete` for it if accepted, and an
//!    `agent_message_chunk` `url accepted`, `url declined`, `url cancelled` or `no url: the
//!    client did not advertise elicitation.url`, then a newline; then `done` and `end_turn`;
//! 4. if TEXT contains the word `news`, one update of each kind that needs a client
//!    capability (newest v1 schema): a `notice` (`session.notices`), a `plan_update` (steps),
//!    a `plan_update` (Markdown) and a `plan_removed` (`plan`), a `compaction_update` and a
//!    `compaction_summary_chunk` (`session.compaction`), a `subagent_update`, a
//!    `session_message` and a `session_message_chunk` (`subagents`), then
//!    a completed `tool_call` with a `name`; each one the client did not advertise is refused
//!    by the core and reported instead as an `agent_message_chunk` `not sent: KIND (needs
//!    CAPABILITY)`; then `done` and `end_turn` (steps 5-7 are skipped);
//! 5. an `agent_thought_chunk`, then a `plan`;
//! 6. a `tool_call` (`kind: read`, `status: pending`, `locations: [PATH]` when there is a PATH);
//! 7. one `session/request_permission` for it, offering `allow-once` and `reject-once`:
//!    * rejected: `tool_call_update` `failed`, and the turn ends `end_turn`;
//!    * cancelled (or `session/cancel` at any point): the turn ends `cancelled`, nothing is read;
//!    * allowed: `tool_call_update` `in_progress`; then `fs/read_text_file` of PATH only if PATH
//!      exists and the client advertised `fs.readTextFile`; then `tool_call_update`
//!      `completed` with the file's text as content (or a note saying why nothing was read,
//!      or `failed` with the client's error when the read was refused); an
//!      `agent_message_chunk` `done`; `end_turn`.
//!
//! Sessions and turns run concurrently (up to [`AgentConfig::max_handlers`] requests at once).
//! The agent logs a line per request to stderr, never to stdout, and [`ReferenceAgent::serve_stdio`] returns
//! as soon as stdin ends.

mod form;
pub mod history;
pub mod modes;
mod news;
mod script;
mod sessions;
#[cfg(feature = "unstable_protocol_v2")]
pub mod v2;

use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use acp_blocking::acp_proto::types::*;
use acp_blocking::acp_proto::{Method, RpcError};
use acp_blocking::{Agent, AgentOptions, Error, PromptContext, RequestContext};
use serde_json::{Value, json};

pub use form::{LINK_URL, form_schema, is_elicit, is_link};
pub use news::is_news;
pub use sessions::TOO_MANY_SESSIONS;
use sessions::{Closed, Sessions};

/// The permission option that lets the tool call run.
pub const ALLOW_ONCE: &str = "allow-once";
/// The permission option that rejects the tool call.
pub const REJECT_ONCE: &str = "reject-once";
/// The diagnostic extension method answered with its own params.
pub const ECHO_METHOD: &str = "_test/echo";
/// The steering extension the official Claude and Codex adapters ship: `{sessionId, prompt}`
/// adds the prompt to the session's running turn while that turn waits (a `slow` prompt, step
/// 2), echoed at once as `steered: TEXT`; answered `{outcome: "injected"}`, or `"failed"` when
/// no turn of the session waits (this agent never starts a turn for it). Advertised at
/// `_meta.steering.supported` of the answer to `initialize` (not with `--no-steering`).
pub const STEERING_METHOD: &str = "_session/steering";

/// Settings of a [`ReferenceAgent`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentConfig {
    /// How long a prompt containing the word `slow` keeps its turn open (default 5 s).
    pub slow_delay: Duration,
    /// Requests handled at once; more wait in a queue (default 64).
    pub max_handlers: usize,
    /// Log one line per request to stderr (default true).
    pub log: bool,
    /// Sessions open at once; `session/new` beyond is refused until one is closed with
    /// `session/close` (default 1024).
    pub max_sessions: usize,
    /// Keep sessions in this directory, so that `session/load`, `session/resume` and
    /// `session/list` find them after the agent restarts (default none: not advertised).
    pub history: Option<std::path::PathBuf>,
    /// With `history`: advertise `session/resume` too (default true; off, a client must load).
    pub history_resume: bool,
    /// Advertise and serve [`STEERING_METHOD`] (default true; off, a client queues what is
    /// typed during a turn).
    pub steering: bool,
    /// With `history`: answer `session/load` and `session/resume` with the session's modes
    /// and config options (default true; off, as agents that do not: a client must remember
    /// them).
    pub reopen_state: bool,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig {
            slow_delay: Duration::from_secs(5),
            max_handlers: 64,
            log: true,
            max_sessions: 1024,
            history: None,
            history_resume: true,
            steering: true,
            reopen_state: true,
        }
    }
}

/// The reference agent. See the [module docs](self) for what it does.
#[derive(Debug)]
pub struct ReferenceAgent {
    config: AgentConfig,
    sessions: Sessions,
    choices: modes::Choices,
    next_call: AtomicU64,
    history: Option<history::History>,
}

impl Default for ReferenceAgent {
    fn default() -> ReferenceAgent {
        ReferenceAgent::new()
    }
}

/// How a turn continues after a step.
enum Step {
    Go,
    Stop(StopReason),
}

impl ReferenceAgent {
    /// An agent with the default settings.
    pub fn new() -> ReferenceAgent {
        ReferenceAgent::with_config(AgentConfig::default())
    }

    /// An agent with the given settings.
    pub fn with_config(config: AgentConfig) -> ReferenceAgent {
        let history = config.history.clone().map(history::History::new);
        let sessions = match history {
            Some(_) => Sessions::with_prefix(config.max_sessions, history::id_prefix()),
            None => Sessions::new(config.max_sessions),
        };
        ReferenceAgent { config, sessions, choices: modes::Choices::default(), next_call: AtomicU64::new(0), history }
    }

    fn log(&self, message: std::fmt::Arguments<'_>) {
        log(self.config.log, message);
    }

    /// Serves the agent over any byte transport until its input ends.
    pub fn serve(self, reader: impl Read + Send + 'static, writer: impl Write + Send + 'static) -> Result<(), Error> {
        let mut options = AgentOptions::default();
        options.max_handlers = self.config.max_handlers;
        acp_blocking::serve_with(self, reader, writer, options)
    }

    /// Serves the agent on stdin and stdout until stdin ends.
    pub fn serve_stdio(self) -> Result<(), Error> {
        self.serve(io::stdin(), io::stdout())
    }

    /// The turn after the echo: the `news` updates, or thought, plan, tool call, permission, read.
    fn turn(&self, text: &str, path: Option<&str>, cx: &PromptContext, closed: &Closed) -> Result<Step, Error> {
        if let Some(update) = self.choices.command(text, cx.session_id()) {
            cx.send_update(update)?;
            return Ok(Step::Go);
        }
        if is_elicit(text) {
            let said = form::ask_form(cx)?;
            cx.send_text(format!("{said}\n"))?;
            return Ok(Step::Go);
        }
        if is_link(text) {
            let id = format!("link-{}", self.next_call.fetch_add(1, Ordering::Relaxed) + 1);
            let said = form::ask_url(cx, &id)?;
            cx.send_text(format!("{said}\n"))?;
            return Ok(Step::Go);
        }
        if is_news(text) {
            let call_id = format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed) + 1);
            news::send_news(cx, &call_id)?;
            return Ok(Step::Go);
        }
        cx.send_update(SessionUpdate::AgentThoughtChunk(ContentChunk::new(ContentBlock::text(script::thought(
            path, true,
        )))))?;
        let [read, report] = script::plan(path);
        cx.send_update(SessionUpdate::Plan(Plan::new(vec![
            PlanEntry::new(read.content, read.priority, PlanEntryStatus::InProgress),
            PlanEntry::new(report.content, report.priority, PlanEntryStatus::Pending),
        ])))?;

        let call_id = format!("call-{}", self.next_call.fetch_add(1, Ordering::Relaxed) + 1);
        let title = script::tool_title(path);
        let locations = path.map(|p| vec![ToolCallLocation::new(p)]);
        let mut call = ToolCall::new(call_id.as_str(), title.as_str());
        call.kind = Some(ToolKind::Read);
        call.status = Some(ToolCallStatus::Pending);
        call.locations = locations.clone();
        call.raw_input = Some(script::raw_input(path, text));
        cx.send_update(SessionUpdate::ToolCall(call))?;

        let mut ask = ToolCallUpdate::new(call_id.as_str());
        ask.title = Some(title);
        ask.kind = Some(ToolKind::Read);
        ask.status = Some(ToolCallStatus::Pending);
        ask.locations = locations;
        let allowed = match cx.request_permission(ask, script::permission_options())? {
            RequestPermissionOutcome::Selected(s) => s.option_id == ALLOW_ONCE,
            _ => return Ok(Step::Stop(StopReason::Cancelled)),
        };
        if stopped(cx, closed) {
            return Ok(Step::Stop(StopReason::Cancelled));
        }
        if !allowed {
            cx.send_update(tool_update(&call_id, ToolCallStatus::Failed, Some(script::REJECTED.to_owned())))?;
            return Ok(Step::Stop(StopReason::EndTurn));
        }
        cx.send_update(tool_update(&call_id, ToolCallStatus::InProgress, None))?;

        let can_read = cx.negotiated().is_some_and(|n| n.peer.allows(Method::ReadTextFile));
        let (status, content) = match path {
            None => (ToolCallStatus::Completed, script::NO_PATH.to_owned()),
            Some(p) if !Path::new(p).exists() => (ToolCallStatus::Completed, script::missing(p)),
            Some(p) if !can_read => (
                ToolCallStatus::Completed,
                format!("Not read: the client did not advertise fs.readTextFile, so {p} stays unread."),
            ),
            Some(p) => match cx.read_text_file(p, None, None) {
                Ok(text) => (ToolCallStatus::Completed, text),
                Err(Error::Cancelled) => return Ok(Step::Stop(StopReason::Cancelled)),
                Err(Error::Rpc(e)) => (ToolCallStatus::Failed, format!("The client refused to read {p}: {e}")),
                Err(e) => return Err(e),
            },
        };
        if stopped(cx, closed) {
            return Ok(Step::Stop(StopReason::Cancelled));
        }
        cx.send_update(tool_update(&call_id, status, Some(content)))?;
        Ok(Step::Go)
    }
}

/// The text of an `append` system prompt (its text blocks joined by spaces); `-32602` for
/// another mode (not advertised) or one without text.
fn system_prompt_text(system: &SystemPrompt) -> Result<String, RpcError> {
    if system.mode != SystemPromptMode::Append {
        return Err(RpcError::invalid_params(format!(
            "systemPrompt mode `{}` is not supported (only append)",
            system.mode.as_str()
        )));
    }
    let text = prompt_text(&system.content);
    if text.is_empty() {
        return Err(RpcError::invalid_params("systemPrompt has no text"));
    }
    Ok(text)
}

/// Whether the turn should stop: cancelled (`session/cancel`), or its session closed.
fn stopped(cx: &PromptContext, closed: &Closed) -> bool {
    cx.is_cancelled() || closed.is_set()
}

/// A `tool_call_update` changing the status and, optionally, the content.
fn tool_update(call_id: &str, status: ToolCallStatus, text: Option<String>) -> SessionUpdate {
    let mut update = ToolCallUpdate::new(call_id);
    update.status = Some(status);
    update.content = text.map(|t| vec![ToolCallContent::from(ContentBlock::text(t))]);
    SessionUpdate::ToolCallUpdate(update)
}

/// The prompt's text blocks joined by spaces.
pub fn prompt_text(prompt: &[ContentBlock]) -> String {
    let texts: Vec<&str> = prompt
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(" ")
}

/// The first whitespace-separated word of `text` that is an absolute path.
pub fn first_absolute_path(text: &str) -> Option<&str> {
    text.split_whitespace().find(|word| Path::new(word).is_absolute())
}

/// Whether `text` contains the word `slow` (any case, delimited by non-alphanumerics).
pub fn is_slow(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| w.eq_ignore_ascii_case("slow"))
}

impl Agent for ReferenceAgent {
    fn initialize(&self, request: InitializeRequest, _: &RequestContext) -> Result<InitializeResponse, RpcError> {
        let client = request.client_info.as_ref().map_or("an unnamed client".to_owned(), |i| i.name.clone());
        self.log(format_args!("initialize from {client} (asked for protocol version {})", request.protocol_version.0));
        // A v1 agent answers 1 whatever the client asked for.
        let mut response = InitializeResponse::new(ProtocolVersion::V1);
        let caps = &mut response.agent_capabilities;
        caps.load_session = false;
        caps.session_capabilities.close = Some(SessionCloseCapabilities::default());
        caps.session_capabilities.system_prompt = Some(SessionSystemPromptCapabilities::default());
        caps.prompt_capabilities.image = true;
        caps.prompt_capabilities.audio = false;
        caps.prompt_capabilities.embedded_context = true;
        caps.mcp_capabilities.http = false;
        caps.mcp_capabilities.sse = false;
        if self.history.is_some() {
            history::advertise(caps, self.config.history_resume);
        }
        if self.config.steering {
            response.meta = Some(Meta::from_iter([("steering".to_owned(), json!({ "supported": true }))]));
        }
        let mut info = Implementation::new("acp-reference-agent", env!("CARGO_PKG_VERSION"));
        info.title = Some("acp-rs reference agent".to_owned());
        response.agent_info = Some(info);
        Ok(response)
    }

    fn new_session(&self, request: NewSessionRequest, _: &RequestContext) -> Result<NewSessionResponse, RpcError> {
        if !Path::new(&request.cwd).is_absolute() {
            return Err(RpcError::invalid_params(format!("cwd must be an absolute path, got `{}`", request.cwd))
                .with_data(json!({ "reason": "cwd must be an absolute path", "cwd": request.cwd })));
        }
        let system_prompt = request.system_prompt.as_ref().map(system_prompt_text).transpose()?;
        let id = self.sessions.open(system_prompt)?;
        if let Some(history) = &self.history {
            history.create(&id, &request.cwd)?;
        }
        self.log(format_args!("session {id} opened in {}", request.cwd));
        let choice = self.choices.open(&id);
        let mut response = NewSessionResponse::new(id);
        (response.modes, response.config_options) = (Some(choice.modes()), Some(choice.options()));
        Ok(response)
    }

    fn close_session(
        &self,
        request: CloseSessionRequest,
        _: &RequestContext,
    ) -> Result<CloseSessionResponse, RpcError> {
        self.sessions.close(&request.session_id)?;
        self.choices.close(&request.session_id);
        self.log(format_args!("session {} closed", request.session_id));
        Ok(CloseSessionResponse::default())
    }

    fn prompt(&self, request: PromptRequest, cx: &PromptContext) -> Result<PromptResponse, RpcError> {
        let closed = self.sessions.get(&request.session_id)?;
        let text = prompt_text(&request.prompt);
        let path = first_absolute_path(&text);
        self.log(format_args!("prompt on {}: {text:?}", request.session_id));
        cx.send_text(script::echo(&text))?;
        if let Some(system) = self.sessions.system_prompt(&request.session_id) {
            cx.send_text(script::system_prompt_note(&system))?;
        }
        // What `_session/steering` adds meanwhile is echoed into the turn.
        let mut steered = |text: String| {
            let _ = cx.send_text(format!("\nsteered: {text}"));
        };
        if is_slow(&text) && closed.wait(cx.cancellation(), self.config.slow_delay, &mut steered) {
            return Ok(PromptResponse::new(StopReason::Cancelled));
        }
        if stopped(cx, &closed) {
            return Ok(PromptResponse::new(StopReason::Cancelled));
        }
        let stop = match self.turn(&text, path, cx, &closed) {
            Ok(Step::Go) => match cx.send_text(script::DONE) {
                Ok(()) => StopReason::EndTurn,
                Err(_) if stopped(cx, &closed) => StopReason::Cancelled,
                Err(e) => return Err(e.into()),
            },
            Ok(Step::Stop(stop)) => stop,
            // A closed session's updates and requests are refused by the core: the turn ends.
            Err(_) if stopped(cx, &closed) => StopReason::Cancelled,
            Err(e) => return Err(e.into()),
        };
        // After `session/cancel` the core answers `cancelled` whatever we return; say it too,
        // and after `session/close`.
        let stop = if stopped(cx, &closed) { StopReason::Cancelled } else { stop };
        if let Some(history) = &self.history {
            let done = if stop == StopReason::EndTurn { format!("\n{}", script::DONE) } else { String::new() };
            history.record_turn(&request.session_id, &text, &format!("{}{done}", script::echo(&text)));
        }
        self.log(format_args!("turn on {} ended {}", request.session_id, stop.as_str()));
        Ok(PromptResponse::new(stop))
    }

    fn load_session(&self, request: LoadSessionRequest, cx: &RequestContext) -> Result<LoadSessionResponse, RpcError> {
        self.history_load(request, cx)
    }

    fn resume_session(
        &self,
        request: ResumeSessionRequest,
        _: &RequestContext,
    ) -> Result<ResumeSessionResponse, RpcError> {
        self.history_resume(request)
    }

    fn list_sessions(
        &self,
        request: ListSessionsRequest,
        _: &RequestContext,
    ) -> Result<ListSessionsResponse, RpcError> {
        let history = self.history.as_ref().ok_or_else(|| RpcError::method_not_found("session/list"))?;
        history.list(request.cwd.as_deref(), request.cursor.as_deref())
    }

    fn set_session_mode(
        &self,
        request: SetSessionModeRequest,
        cx: &RequestContext,
    ) -> Result<SetSessionModeResponse, RpcError> {
        self.sessions.get(&request.session_id)?;
        let choice = self.choices.set_mode(&request.session_id, request.mode_id.as_str())?;
        self.log(format_args!("session {} mode {}", request.session_id, request.mode_id));
        modes::announce_mode(cx, &request.session_id, &choice);
        Ok(SetSessionModeResponse::default())
    }

    fn set_session_config_option(
        &self,
        request: SetSessionConfigOptionRequest,
        cx: &RequestContext,
    ) -> Result<SetSessionConfigOptionResponse, RpcError> {
        self.sessions.get(&request.session_id)?;
        let (choice, mode_changed) = self.choices.set_option(&request)?;
        self.log(format_args!("session {} option {}", request.session_id, request.config_id));
        if mode_changed {
            modes::announce_mode(cx, &request.session_id, &choice);
        }
        Ok(SetSessionConfigOptionResponse::new(choice.options()))
    }

    fn ext_method(&self, method: &str, params: Value, _: &RequestContext) -> Result<Value, RpcError> {
        match method {
            ECHO_METHOD => Ok(params),
            STEERING_METHOD if self.config.steering => {
                #[derive(serde::Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Steering {
                    session_id: SessionId,
                    prompt: Vec<ContentBlock>,
                }
                let steering: Steering =
                    serde_json::from_value(params).map_err(|e| RpcError::invalid_params(e.to_string()))?;
                let text = prompt_text(&steering.prompt);
                let outcome = self.sessions.get(&steering.session_id)?.steer(text.clone());
                self.log(format_args!("steering of {} ({outcome}): {text:?}", steering.session_id));
                Ok(json!({ "outcome": outcome }))
            }
            _ => Err(RpcError::method_not_found(method)),
        }
    }
}

/// A line of the agent's log on stderr, when `enabled` (not `--quiet`). What the client sent
/// (its name, paths, ids, prompts) is in it, so the line is made inert ([`crate::sanitize`]).
pub(crate) fn log(enabled: bool, message: std::fmt::Arguments<'_>) {
    if enabled {
        eprintln!("acp agent: {}", crate::sanitize::clean_line(&message.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_words_and_text() {
        assert_eq!(first_absolute_path("read ./x /tmp/a.txt /b"), Some("/tmp/a.txt"));
        assert_eq!(first_absolute_path("nothing here"), None);
        assert!(is_slow("please be SLOW."));
        assert!(!is_slow("slowly"));
        let prompt = vec![ContentBlock::text("read"), ContentBlock::text("/etc/hostname")];
        assert_eq!(prompt_text(&prompt), "read /etc/hostname");
    }
}
