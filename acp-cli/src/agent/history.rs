//! `acp agent --history DIR`: sessions that outlive the agent process, so that a client can
//! reopen them with `session/load` (the history replayed), `session/resume` (nothing
//! replayed) and find them with `session/list`. Both answer the session's `modes` and
//! `configOptions` as `session/new` did (its current choice, or the defaults in a new
//! process).
//!
//! Each session is a file `DIR/ID.jsonl`: a first line `{"cwd": …}`, then one
//! `session/update` per line, the ones `session/load` replays: each prompt as a
//! `user_message_chunk`, and the agent's `echo: TEXT` and closing `done` as one
//! `agent_message_chunk` (not the thought, plan and tool call steps). A file stops growing at
//! [`MAX_HISTORY_BYTES`], and a replay reads at most that much, so neither the disk nor a
//! replay grows without bound. Session ids of such an agent carry its start time, so that
//! agents sharing a directory do not reuse each other's ids; a session id that is not a plain
//! name (letters, digits, `-`, `_`) is unknown. Only regular files are read or appended to (a
//! FIFO there would block the agent).

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use acp_blocking::RequestContext;
use acp_blocking::acp_proto::RpcError;
use acp_blocking::acp_proto::types::*;
use serde_json::{Value, json};

use crate::files::{append_regular, open_regular};
use crate::store::format_time;

/// The most bytes a session's history file holds (and a replay reads).
pub const MAX_HISTORY_BYTES: u64 = 1024 * 1024;
/// Sessions listed per `session/list` page.
const PAGE: usize = 50;

/// The directory of remembered sessions.
#[derive(Debug)]
pub(super) struct History {
    dir: PathBuf,
}

impl History {
    pub(super) fn new(dir: PathBuf) -> History {
        History { dir }
    }

    /// The file of session `id`, if `id` is a plain name.
    fn file(&self, id: &str) -> Option<PathBuf> {
        let plain = !id.is_empty()
            && id.len() <= 100
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        plain.then(|| self.dir.join(format!("{id}.jsonl")))
    }

    /// Starts the history of a new session.
    pub(super) fn create(&self, id: &SessionId, cwd: &str) -> Result<(), RpcError> {
        let path = self.file(id.as_ref()).ok_or_else(|| RpcError::internal_error("unusable session id"))?;
        fs::create_dir_all(&self.dir)
            .and_then(|()| fs::write(&path, format!("{}\n", json!({ "cwd": cwd }))))
            .map_err(|e| RpcError::internal_error(format!("cannot write {}: {e}", path.display())))
    }

    /// The working directory of a remembered session, or the unknown-session error.
    pub(super) fn cwd(&self, id: &SessionId) -> Result<String, RpcError> {
        let unknown = || {
            RpcError::resource_not_found(format!("no session `{id}` in the history"))
                .with_data(json!({ "reason": "unknown session", "sessionId": id }))
        };
        let path = self.file(id.as_ref()).ok_or_else(unknown)?;
        let file = open_regular(&path).map_err(|_| unknown())?;
        first_line_cwd(file).ok_or_else(unknown)
    }

    /// Appends a turn: the prompt's text, and what the agent said.
    pub(super) fn record_turn(&self, id: &SessionId, prompt: &str, said: &str) {
        let Some(path) = self.file(id.as_ref()) else { return };
        let Ok(mut file) = append_regular(&path) else { return };
        if file.metadata().map_or(true, |m| m.len() >= MAX_HISTORY_BYTES) {
            return;
        }
        let lines = [
            SessionUpdate::UserMessageChunk(ContentChunk::new(ContentBlock::text(prompt))),
            SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::text(said))),
        ];
        let mut text = String::new();
        for update in lines {
            if let Ok(line) = serde_json::to_string(&update) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        let _ = file.write_all(text.as_bytes());
    }

    /// Sends the session's history to the client as `session/update`s.
    pub(super) fn replay(&self, id: &SessionId, cx: &RequestContext) -> Result<(), RpcError> {
        let path = self.file(id.as_ref()).ok_or_else(|| RpcError::internal_error("unusable session id"))?;
        let file = open_regular(&path).map_err(|e| RpcError::internal_error(format!("{}: {e}", path.display())))?;
        for line in BufReader::new(file.take(MAX_HISTORY_BYTES)).lines().skip(1) {
            let Ok(line) = line else { break };
            if let Ok(update) = serde_json::from_str::<SessionUpdate>(&line) {
                cx.send_session_update(id.clone(), update).map_err(|e| RpcError::internal_error(e.to_string()))?;
            }
        }
        Ok(())
    }

    /// One page of the sessions in `cwd` (all with `None`), the latest first; `cursor` is the
    /// index to start at.
    pub(super) fn list(&self, cwd: Option<&str>, cursor: Option<&str>) -> Result<ListSessionsResponse, RpcError> {
        let start: usize = match cursor {
            Some(c) => c.parse().map_err(|_| RpcError::invalid_params(format!("bad cursor `{c}`")))?,
            None => 0,
        };
        let mut found: Vec<(u64, SessionInfo)> = Vec::new();
        for entry in fs::read_dir(&self.dir).into_iter().flatten().flatten().take(10_000) {
            if let Some(info) = session_info(&entry.path())
                && cwd.is_none_or(|c| c == info.1.cwd)
            {
                found.push(info);
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.session_id.to_string().cmp(&b.1.session_id.to_string())));
        let page: Vec<SessionInfo> = found.iter().skip(start).take(PAGE).map(|(_, info)| info.clone()).collect();
        let mut response = ListSessionsResponse::new(page);
        if start + PAGE < found.len() {
            response.next_cursor = Some((start + PAGE).to_string());
        }
        Ok(response)
    }
}

/// The `cwd` of a history file's first line.
fn first_line_cwd(file: File) -> Option<String> {
    let mut line = String::new();
    BufReader::new(file.take(64 * 1024)).read_line(&mut line).ok()?;
    let value: Value = serde_json::from_str(&line).ok()?;
    value.get("cwd")?.as_str().map(str::to_owned)
}

/// A history file's session: its modification time (Unix seconds) and listing.
fn session_info(path: &Path) -> Option<(u64, SessionInfo)> {
    let id = path.file_name()?.to_str()?.strip_suffix(".jsonl")?;
    let file = open_regular(path).ok()?;
    let modified = file.metadata().ok()?.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_secs();
    let mut reader = BufReader::new(file.take(64 * 1024));
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let cwd = serde_json::from_str::<Value>(&line).ok()?.get("cwd")?.as_str()?.to_owned();
    let mut info = SessionInfo::new(id, cwd);
    line.clear();
    if reader.read_line(&mut line).is_ok()
        && let Ok(SessionUpdate::UserMessageChunk(chunk)) = serde_json::from_str(&line)
        && let ContentBlock::Text(text) = chunk.content
    {
        info.title = text.text.lines().next().map(|l| l.chars().take(80).collect());
    }
    let at = format_time(i64::try_from(modified).unwrap_or(0));
    info.updated_at = Some(at.replacen(' ', "T", 1));
    Some((modified, info))
}

/// The id prefix of an agent with a history: `sess-` and its start time in base 36
/// (nanoseconds), so that agents sharing a directory do not reuse ids.
pub(super) fn id_prefix() -> String {
    let mut n = std::time::SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let mut digits = Vec::new();
    while n > 0 {
        digits.push(char::from_digit((n % 36) as u32, 36).unwrap_or('0'));
        n /= 36;
    }
    let stamp: String = digits.iter().rev().collect();
    format!("sess-{stamp}-")
}

/// What an agent with a history advertises: `loadSession`, `session/list`, and unless
/// `resume` is off `session/resume`.
pub(super) fn advertise(caps: &mut AgentCapabilities, resume: bool) {
    caps.load_session = true;
    caps.session_capabilities.list = Some(SessionListCapabilities::default());
    if resume {
        caps.session_capabilities.resume = Some(SessionResumeCapabilities::default());
    }
}

impl super::ReferenceAgent {
    /// `session/load`: the session's history replayed, then the session is open again.
    pub(super) fn history_load(
        &self,
        request: LoadSessionRequest,
        cx: &RequestContext,
    ) -> Result<LoadSessionResponse, RpcError> {
        let history = self.history.as_ref().ok_or_else(|| RpcError::method_not_found("session/load"))?;
        history.cwd(&request.session_id)?;
        self.sessions.reopen(&request.session_id)?;
        history.replay(&request.session_id, cx)?;
        self.log(format_args!("session {} loaded in {}", request.session_id, request.cwd));
        // The session's state again, as session/new gave it: a client has no other way to
        // learn it after a load.
        let choice = self.choices.reopen(&request.session_id);
        let mut response = LoadSessionResponse::default();
        if self.config.reopen_state {
            (response.modes, response.config_options) = (Some(choice.modes()), Some(choice.options()));
        }
        Ok(response)
    }

    /// `session/resume`: the session is open again, nothing replayed.
    pub(super) fn history_resume(&self, request: ResumeSessionRequest) -> Result<ResumeSessionResponse, RpcError> {
        let history = self.history.as_ref().ok_or_else(|| RpcError::method_not_found("session/resume"))?;
        history.cwd(&request.session_id)?;
        self.sessions.reopen(&request.session_id)?;
        self.log(format_args!("session {} resumed in {}", request.session_id, request.cwd));
        let choice = self.choices.reopen(&request.session_id);
        let mut response = ResumeSessionResponse::default();
        if self.config.reopen_state {
            (response.modes, response.config_options) = (Some(choice.modes()), Some(choice.options()));
        }
        Ok(response)
    }
}
