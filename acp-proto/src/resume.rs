//! The control messages of resumable remote streams (feature `unstable_resumable_transport`),
//! after the draft RFD "durable & resumable transport": what a remote server and its clients
//! write and read to resume a stream, so that no transport parses ACP itself. Pure functions
//! over frame text: no I/O, no clock.
//!
//! # Rules
//!
//! 1. **Cursors.** A server stamps every agent message it streams with its cursor at
//!    `_meta["acp/cursor"]` of the message's envelope, as a string ([`with_cursor`]); in a
//!    batch, each object of the batch. What was in the envelope's `_meta` stays; a `_meta`
//!    that is no object, or text that is no JSON object or array, goes out unchanged (the
//!    agent's bytes are relayed as they came). A client reads back the cursor of a message,
//!    or of the last stamped message of a batch ([`cursor_of`]).
//! 2. **Resume.** A resuming client's first WebSocket frame is `stream/resume` with
//!    `params.cursor` (a string; a number is read as its decimal text), as a request
//!    (answered first) or a notification ([`ResumeRequest`]).
//! 3. **The answer** to a `stream/resume` request carries, at `result._meta`, how many of the
//!    client's frames reached the agent (`"acp/received"`) and each session's turn state
//!    (`"acp/turnState"`: by session id, `{"state": …, "promptRequestId": …}`)
//!    ([`ResumeAnswer`]). A refusal is the notification `stream/resume_failed` with
//!    `params.reason` ([`resume_failed`]); a client reads either with [`ResumeAnswer::read`].
//! 4. **Turn states** are read off the connection's [`Observer`] ([`turn_states`]): `running`
//!    while a turn is open (`requires_action` while a v2 agent waits on the client), with the
//!    id of its open prompt if one is; `idle` for every other session the observer knows. A
//!    peer's map is read up to [`MAX_TURNS`] sessions, sorted by session id.
//! 5. **Advertised retention.** A server that resumes streams says so in its answer to
//!    `initialize`, at `result.agentCapabilities._meta["acp/transport"].resumable`
//!    (`{"retentionMessages": …, "retentionSeconds": …}`), keeping what `_meta` held
//!    ([`advertise`]); an error answer, or one without capabilities, is left as it is.
//! 6. **Never a panic on peer input**: every reader answers `None` or an error for text it
//!    cannot use (the fuzz target `resume` feeds them arbitrary bytes).
//!
//! ```
//! use acp_proto::resume::{ResumeAnswer, ResumeRequest, cursor_of, with_cursor};
//!
//! // The server stamps what the agent sent; the client keeps the last cursor it handled.
//! let stamped = with_cursor(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#, 7);
//! assert_eq!(cursor_of(&stamped).as_deref(), Some("7"));
//!
//! // After a loss the client resumes from it, and the server reads the request back.
//! let request = ResumeRequest::new("7").with_id("acp/resume");
//! let read = ResumeRequest::read(&request.to_frame()).expect("a resume");
//! assert_eq!(read.cursor, "7");
//!
//! // The server answers with what reached the agent, the client reads the answer.
//! let answer = ResumeAnswer { received: 4, turns: Vec::new() };
//! let frame = answer.to_frame(read.id.as_ref().expect("sent as a request"));
//! assert_eq!(ResumeAnswer::read(&frame, &"acp/resume".into()), Ok(answer));
//! ```

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::jsonrpc::RequestId;
use crate::observer::{Observer, TurnState};
use crate::{Method, Side};

/// The key of a message's cursor in its envelope's `_meta`.
pub const CURSOR_KEY: &str = "acp/cursor";
/// The method of the resume control message.
pub const RESUME_METHOD: &str = "stream/resume";
/// The method of a refused resume.
pub const RESUME_FAILED_METHOD: &str = "stream/resume_failed";
/// The sessions a resume answer's turn-state map is read for at most.
pub const MAX_TURNS: usize = 64;

/// `frame` (one message or a batch) with `cursor` at `_meta["acp/cursor"]` of its envelope,
/// of each object of a batch (rule 1). The message is not re-encoded: the cursor is written
/// into the text, and only an existing `_meta` object is parsed.
pub fn with_cursor(frame: &str, cursor: u64) -> String {
    let body = frame.trim_start();
    if body.starts_with('[') {
        let Ok(batch) = serde_json::from_str::<Vec<&RawValue>>(frame) else { return frame.to_owned() };
        let mut out = String::with_capacity(frame.len() + batch.len() * 32);
        out.push('[');
        for (n, message) in batch.iter().enumerate() {
            if n > 0 {
                out.push(',');
            }
            out.push_str(&stamp(message.get(), cursor).unwrap_or_else(|| message.get().to_owned()));
        }
        out.push(']');
        return out;
    }
    stamp(frame, cursor).unwrap_or_else(|| frame.to_owned())
}

/// Only what stamping reads of an envelope: its `_meta`, borrowed as text.
#[derive(Deserialize)]
struct MetaText<'a> {
    #[serde(rename = "_meta", borrow, default, deserialize_with = "present")]
    meta: Option<&'a RawValue>,
}

/// A field that is there, even as `null` (which a plain `Option` reads as absent).
fn present<'de, D: serde::Deserializer<'de>>(field: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(field).map(Some)
}

/// One object `message` with its cursor, or `None` if it is no object or its `_meta` is
/// no object.
fn stamp(message: &str, cursor: u64) -> Option<String> {
    let body = message.trim_start();
    if !body.starts_with('{') {
        return None;
    }
    let envelope: MetaText<'_> = serde_json::from_str(message).ok()?;
    let Some(meta) = envelope.meta else {
        // No `_meta`: one is written right after the opening brace.
        let open = message.len() - body.len() + 1;
        let empty = message[open..].trim_start().starts_with('}');
        let separator = if empty { "" } else { "," };
        return Some(format!(
            r#"{}"_meta":{{"{CURSOR_KEY}":"{cursor}"}}{separator}{}"#,
            &message[..open],
            &message[open..]
        ));
    };
    let mut map: Map<String, Value> = serde_json::from_str(meta.get()).ok()?;
    map.insert(CURSOR_KEY.to_owned(), Value::String(cursor.to_string()));
    // `meta` borrows from `message`: its text is a slice of it, found by address.
    let start = (meta.get().as_ptr() as usize).checked_sub(message.as_ptr() as usize)?;
    let end = start + meta.get().len();
    debug_assert_eq!(message.get(start..end), Some(meta.get()), "a borrowed RawValue is a slice of its input");
    let meta = serde_json::to_string(&map).ok()?;
    Some(format!("{}{meta}{}", message.get(..start)?, message.get(end..)?))
}

/// Only what a client reads of an envelope: its cursor.
#[derive(Deserialize)]
struct CursorEnvelope {
    #[serde(rename = "_meta")]
    meta: Option<CursorMeta>,
}

#[derive(Deserialize)]
struct CursorMeta {
    #[serde(rename = "acp/cursor")]
    cursor: Option<String>,
}

/// The cursor of a stamped message, or of the last stamped message of a batch (rule 1).
pub fn cursor_of(frame: &str) -> Option<String> {
    let one = |text: &str| serde_json::from_str::<CursorEnvelope>(text).ok()?.meta?.cursor;
    if frame.trim_start().starts_with('[') {
        let batch: Vec<&RawValue> = serde_json::from_str(frame).ok()?;
        return batch.iter().rev().find_map(|message| one(message.get()));
    }
    one(frame)
}

/// A `stream/resume` control message (rule 2).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResumeRequest {
    /// Its id when sent as a request (to be answered first), `None` as a notification.
    pub id: Option<RequestId>,
    /// The last cursor the client handled.
    pub cursor: String,
}

/// What the server reads of a first frame.
#[derive(Deserialize)]
struct ResumeText {
    id: Option<RequestId>,
    method: String,
    params: ResumeParams,
}

#[derive(Deserialize)]
struct ResumeParams {
    cursor: Value,
}

impl ResumeRequest {
    /// A resume from `cursor`, as a notification.
    pub fn new(cursor: impl Into<String>) -> ResumeRequest {
        ResumeRequest { id: None, cursor: cursor.into() }
    }

    /// The same resume as a request with `id`, answered first.
    pub fn with_id(self, id: impl Into<RequestId>) -> ResumeRequest {
        ResumeRequest { id: Some(id.into()), ..self }
    }

    /// The frame's text.
    pub fn to_frame(&self) -> String {
        let params = json!({"cursor": self.cursor});
        match &self.id {
            Some(id) => json!({"jsonrpc": "2.0", "id": id, "method": RESUME_METHOD, "params": params}),
            None => json!({"jsonrpc": "2.0", "method": RESUME_METHOD, "params": params}),
        }
        .to_string()
    }

    /// The resume `frame` asks for, or `None` if it is no `stream/resume` with a string or
    /// integer `params.cursor`.
    pub fn read(frame: &str) -> Option<ResumeRequest> {
        let text: ResumeText = serde_json::from_str(frame).ok()?;
        if text.method != RESUME_METHOD {
            return None;
        }
        let cursor = match text.params.cursor {
            Value::String(cursor) => cursor,
            Value::Number(cursor) if cursor.is_u64() || cursor.is_i64() => cursor.to_string(),
            _ => return None,
        };
        Some(ResumeRequest { id: text.id, cursor })
    }
}

/// The `stream/resume_failed` notification saying `reason` (rule 3).
pub fn resume_failed(reason: &str) -> String {
    json!({"jsonrpc": "2.0", "method": RESUME_FAILED_METHOD, "params": {"reason": reason}}).to_string()
}

/// A session's turn as a resume reports it (rule 4). Its strings are the peer's: escape them
/// before they reach a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ResumedTurn {
    /// The session.
    pub session: String,
    /// `running`, `requires_action` (a v2 agent waits on the client) or `idle`; what the
    /// server wrote, `unknown` if it wrote none.
    pub state: String,
    /// The id of the running turn's prompt request, as JSON text (`3`, `"p-1"`), if the
    /// server named it.
    pub prompt_request_id: Option<String>,
}

impl ResumedTurn {
    /// A turn of `session` in `state`, with no prompt named.
    pub fn new(session: impl Into<String>, state: impl Into<String>) -> ResumedTurn {
        ResumedTurn { session: session.into(), state: state.into(), prompt_request_id: None }
    }
}

/// Each session's turn state, read off the connection's observer (rule 4), by session id.
pub fn turn_states(observer: &Observer) -> Vec<ResumedTurn> {
    let prompt = |session: &str| {
        observer
            .open_requests(Side::Client)
            .find(|r| r.method == Some(Method::Prompt) && r.session.as_deref() == Some(session))
            .and_then(|open| serde_json::to_string(&open.id).ok())
    };
    let state = |session: &str| match observer.turn(session).map(|turn| turn.state) {
        None => ResumedTurn::new(session, "idle"),
        Some(state) => {
            let state = match state {
                TurnState::RequiresAction => "requires_action",
                TurnState::Prompted | TurnState::Running => "running",
            };
            ResumedTurn { prompt_request_id: prompt(session), ..ResumedTurn::new(session, state) }
        }
    };
    observer.sessions().map(state).collect()
}

/// The turn-state map of `turns` as JSON text (`{"sess-1": {"state": "running",
/// "promptRequestId": 3}}`): the `acp/turnState` of a resume's answer, the data of an SSE
/// stream's `acp/turnState` event.
pub fn turn_state_json(turns: &[ResumedTurn]) -> String {
    turn_state_map(turns).to_string()
}

fn turn_state_map(turns: &[ResumedTurn]) -> Value {
    let entry = |turn: &ResumedTurn| {
        let mut entry = Map::new();
        entry.insert("state".to_owned(), Value::String(turn.state.clone()));
        let id = turn.prompt_request_id.as_deref().and_then(|id| serde_json::from_str::<Value>(id).ok());
        if let Some(id) = id {
            entry.insert("promptRequestId".to_owned(), id);
        }
        (turn.session.clone(), Value::Object(entry))
    };
    Value::Object(turns.iter().map(entry).collect())
}

/// The turns of a turn-state map's JSON text, by session id; at most [`MAX_TURNS`]; none if
/// it is no JSON object.
pub fn read_turn_states(text: &str) -> Vec<ResumedTurn> {
    serde_json::from_str::<Value>(text).map(|map| turns_of(&map)).unwrap_or_default()
}

fn turns_of(map: &Value) -> Vec<ResumedTurn> {
    let Some(map) = map.as_object() else { return Vec::new() };
    let mut turns: Vec<ResumedTurn> = map
        .iter()
        .take(MAX_TURNS)
        .map(|(session, turn)| ResumedTurn {
            session: session.clone(),
            state: turn.get("state").and_then(Value::as_str).unwrap_or("unknown").to_owned(),
            prompt_request_id: turn.get("promptRequestId").map(Value::to_string),
        })
        .collect();
    turns.sort_by(|a, b| a.session.cmp(&b.session));
    turns
}

/// The answer to a `stream/resume` request (rule 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeAnswer {
    /// How many of the client's frames on this connection reached the agent.
    pub received: u64,
    /// Each session's turn.
    pub turns: Vec<ResumedTurn>,
}

impl ResumeAnswer {
    /// The answer's text, to the request `id`.
    pub fn to_frame(&self, id: &RequestId) -> String {
        let meta = json!({"acp/turnState": turn_state_map(&self.turns), "acp/received": self.received});
        json!({"jsonrpc": "2.0", "id": id, "result": {"_meta": meta}}).to_string()
    }

    /// The answer to the resume request `id` that `frame` is; else why not: the server's
    /// refusal (`stream/resume_failed`) with its reason, an answer without `acp/received`, or
    /// something else.
    pub fn read(frame: &str, id: &RequestId) -> Result<ResumeAnswer, String> {
        let message: Value = serde_json::from_str(frame).map_err(|_| "the resume's answer is no JSON".to_owned())?;
        let answers = message.get("id").and_then(|m| serde_json::from_value::<RequestId>(m.clone()).ok());
        if answers.as_ref() == Some(id) {
            let received = message
                .pointer("/result/_meta/acp~1received")
                .and_then(Value::as_u64)
                .ok_or_else(|| "the resume's answer does not say how many frames arrived".to_owned())?;
            let turns = message.pointer("/result/_meta/acp~1turnState").map(turns_of).unwrap_or_default();
            return Ok(ResumeAnswer { received, turns });
        }
        match message.pointer("/params/reason").and_then(Value::as_str) {
            Some(reason) if message.get("method").and_then(Value::as_str) == Some(RESUME_FAILED_METHOD) => {
                Err(format!("the server refused to resume: {reason}"))
            }
            _ => Err("the server's first frame after a resume was not its answer".to_owned()),
        }
    }
}

/// The answer to `initialize` with the retention advertised (rule 5), or `None` if `answer`
/// is no successful one with `agentCapabilities` (and so goes out unchanged).
pub fn advertise(answer: &str, retention_messages: usize, retention_seconds: u64) -> Option<String> {
    let mut message: Value = serde_json::from_str(answer).ok()?;
    let caps = message.pointer_mut("/result/agentCapabilities")?.as_object_mut()?;
    let meta = caps.entry("_meta").or_insert_with(|| json!({})).as_object_mut()?;
    let resumable = json!({"retentionMessages": retention_messages, "retentionSeconds": retention_seconds});
    meta.insert("acp/transport".to_owned(), json!({ "resumable": resumable }));
    Some(message.to_string())
}

#[cfg(test)]
mod tests;
