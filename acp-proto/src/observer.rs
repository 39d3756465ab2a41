//! A passive observer of one ACP connection: fed the frames both peers send, it answers which
//! requests and prompt turns are open, which session a message belongs to, and what state a
//! turn is in. It sends nothing and judges nothing (that is [`crate::wire_check`] and the
//! [`connection`](crate::connection) machine): a relay (the remote server), a recorder or a
//! replay asks it instead of reading ACP fields itself.
//!
//! Sans-IO and deterministic like the rest of the core: no clock, no I/O, ordered maps only.
//! Feed it whole frames ([`Observer::observe`], or [`observe_from_client`] /
//! [`observe_from_agent`]), each one JSON text (a trailing newline is whitespace); a byte
//! stream is cut into frames first (at each `\n`, as the connection's framer does). Each call gives back
//! what that frame was ([`Observed`]).
//!
//! [`observe_from_client`]: Observer::observe_from_client
//! [`observe_from_agent`]: Observer::observe_from_agent
//!
//! # Rules
//!
//! 1. **Envelope.** A frame is classified by [`crate::jsonrpc::parse`], as the connection classifies
//!    it: a request, a notification, a response, or invalid (counted in
//!    [`Counters::invalid`], nothing else changes). A JSON array is a batch: each entry is
//!    observed in turn (an entry that is itself an array is invalid).
//! 2. **Open requests.** A request with a string or integer id opens a request of its sender,
//!    keyed by sender and id: its method and the session its `params.sessionId` names. A
//!    request with `id: null` opens nothing (nothing can answer it).
//! 3. **Answers.** A response closes the oldest open request of the *other* peer with its id
//!    (a peer may read an id again once it answered it). An id that differs from the request's
//!    only in its wire type (`1` for `"1"`) still matches, as the transport RFD's reference
//!    server matches them (counted in [`Counters::loose_ids`]). A response that matches no
//!    open request is counted in [`Counters::unmatched_responses`]; `id: null` ones are not
//!    matched at all.
//! 4. **Sessions.** A session is *announced* by a successful response whose result carries a
//!    `sessionId` (`session/new`, `session/fork`), and by a successful answer to
//!    `session/load` or `session/resume` (their results name none: the request's params did;
//!    v2's `session/resume` shares the wire name).
//! 5. **Which session a message belongs to** ([`Observed::session`]): a request's or
//!    notification's `params.sessionId`; a response's, the session its request named, else
//!    the one it announced.
//! 6. **Turns open.** A client's `session/prompt` opens its session's turn
//!    ([`TurnState::Prompted`]); a second prompt of the same session joins that turn. Only a
//!    prompt that opens a request (rule 2: an id, within the bounds) does: nothing could
//!    answer another, so no turn waits on it.
//! 7. **Turns end (v1).** The answer to a prompt ends its turn when it is an error or a result
//!    with a `stopReason` (the stop reason is kept in [`TurnEnd`]).
//! 8. **Turns run on (v2).** A result without `stopReason` (v2's acknowledgement,
//!    `{"messageId": …}`) leaves the turn open, [`TurnState::Running`], until the agent's
//!    `session/update` of that session reports a `state_update`: `idle` ends the turn,
//!    `running` and `requires_action` set its state (and open it, when the agent reports a
//!    turn no prompt of this connection began). A prompt still unanswered at `idle` (sent
//!    before the agent read it: `idle` means "ready to process a new prompt") is not part of
//!    the work that ended: the session's next turn opens at once, [`TurnState::Prompted`],
//!    waiting on it; so in v1 and v2 alike a session's turn waits on exactly its prompts
//!    that are unanswered. The version is read off the messages, so one
//!    observer serves v1 and v2 peers alike (a relay cannot choose its agent's version).
//! 9. **Cancel.** A client's `session/cancel` marks its session's open turn
//!    ([`Turn::cancel_requested`]); the turn still ends only as rules 7 and 8 say.
//! 10. **Direction.** Only the client opens turns and sends `session/cancel`; only the agent's
//!     `session/update`s set turn states and only its answers end turns. The same frame from
//!     the wrong peer is observed as a request or notification and changes no turn.
//! 11. **Bounds** ([`Limits`], counted in [`Counters`] when hit): open requests per sender,
//!     sessions announced, open turns, and the length of each id, method and session id kept.
//!     Past a bound the thing is not tracked (its answer, if any, is then an unmatched
//!     response); nothing else grows with the peers' input.
//!
//! Method names come from the [method table](crate::methods) ([`Method`]); the few field and
//! tag names read (`sessionId`, `stopReason`, `sessionUpdate`, `state_update`, `state`,
//! `idle`, …) are written once, here (a test ties the v2 ones to `acp_proto::v2`'s types).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::jsonrpc::{Incoming, RequestId, parse};
use crate::{Method, Side};

#[cfg(test)]
mod tests;

/// The v2 session update kind that carries a session's state.
pub(crate) const STATE_UPDATE: &str = "state_update";
/// The v2 states of a session, as `state_update` names them.
pub(crate) const IDLE: &str = "idle";
/// See [`IDLE`].
pub(crate) const RUNNING: &str = "running";
/// See [`IDLE`].
pub(crate) const REQUIRES_ACTION: &str = "requires_action";

/// What an [`Observer`] keeps at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Open requests per sender.
    pub max_open_requests: usize,
    /// Sessions announced.
    pub max_sessions: usize,
    /// Open turns.
    pub max_turns: usize,
    /// Bytes of one id, method name or session id kept; a longer one is not tracked.
    pub max_key_len: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_open_requests: 4096, max_sessions: 4096, max_turns: 4096, max_key_len: 1024 }
    }
}

/// What the observer saw and did not track, and how often. All counts only grow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counters {
    /// Frames (or batch entries) that are no valid JSON-RPC message.
    pub invalid: u64,
    /// Responses that matched no open request.
    pub unmatched_responses: u64,
    /// Responses matched to a request whose id had the other wire type.
    pub loose_ids: u64,
    /// Requests not tracked: their sender had [`Limits::max_open_requests`] open.
    pub requests_untracked: u64,
    /// Sessions not remembered: [`Limits::max_sessions`] were.
    pub sessions_untracked: u64,
    /// Turns not tracked: [`Limits::max_turns`] were open.
    pub turns_untracked: u64,
    /// Ids, methods or session ids longer than [`Limits::max_key_len`] (not tracked).
    pub keys_too_long: u64,
}

/// A request sent and not answered yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenRequest {
    /// Who sent it.
    pub from: Side,
    /// Its id, at its wire type.
    pub id: RequestId,
    /// Its method, when the method table has it.
    pub method: Option<Method>,
    /// Its method as sent.
    pub wire: Arc<str>,
    /// The session its params named.
    pub session: Option<Arc<str>>,
}

/// Where a turn is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnState {
    /// A `session/prompt` is not answered yet.
    Prompted,
    /// v2: the prompt was acknowledged (or the agent reported `running`); the turn runs until
    /// the agent reports `idle`.
    Running,
    /// v2: the agent reported `requires_action` (it waits on the client).
    RequiresAction,
}

/// An open turn of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// Its state.
    pub state: TurnState,
    /// Prompts of it not answered yet.
    pub prompts: u32,
    /// The client sent `session/cancel` for the session while the turn was open.
    pub cancel_requested: bool,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnEnd {
    /// The session.
    pub session: Arc<str>,
    /// The stop reason, when the message that ended the turn gave one (a string).
    pub stop_reason: Option<Arc<str>>,
    /// The turn ended with an error answer to its prompt.
    pub error: bool,
}

/// What one frame was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// A request.
    Request,
    /// A notification.
    Notification,
    /// A response.
    Response,
    /// A batch array (its entries were observed one by one).
    Batch,
    /// No valid JSON-RPC message.
    Invalid,
}

/// What [`Observer::observe`] found in one frame.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Observed {
    /// What the frame was.
    pub kind: FrameKind,
    /// Its method (requests and notifications), when the method table has it.
    pub method: Option<Method>,
    /// Its id (requests and responses).
    pub id: Option<RequestId>,
    /// The session it belongs to (rule 5; `None` for a batch).
    pub session: Option<Arc<str>>,
    /// A response: the request it answered (no longer open).
    pub answered: Option<OpenRequest>,
    /// A session it announced (rule 4).
    pub announced: Option<Arc<str>>,
    /// A turn it opened or joined (a prompt), or the first of a batch's.
    pub turn_began: Option<Arc<str>>,
    /// A turn it ended, or the first of a batch's.
    pub turn_ended: Option<TurnEnd>,
}

impl Observed {
    fn of(kind: FrameKind) -> Observed {
        Observed {
            kind,
            method: None,
            id: None,
            session: None,
            answered: None,
            announced: None,
            turn_began: None,
            turn_ended: None,
        }
    }
}

/// The observer of one connection. See the [module docs](self).
#[derive(Debug, Default)]
pub struct Observer {
    limits: Limits,
    /// Open requests by sender and id; copies of an id oldest first.
    open: BTreeMap<(SideKey, RequestId), VecDeque<OpenRequest>>,
    /// Open requests per sender (`[client, agent]`).
    open_count: [usize; 2],
    sessions: BTreeSet<Arc<str>>,
    turns: BTreeMap<Arc<str>, Turn>,
    counters: Counters,
}

/// [`Side`] as an ordered key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum SideKey {
    Client,
    Agent,
}

impl From<Side> for SideKey {
    fn from(side: Side) -> SideKey {
        match side {
            Side::Client => SideKey::Client,
            Side::Agent => SideKey::Agent,
        }
    }
}

fn index(side: Side) -> usize {
    SideKey::from(side) as usize
}

impl Observer {
    /// An observer with the default [`Limits`].
    pub fn new() -> Observer {
        Observer::default()
    }

    /// An observer with `limits`.
    pub fn with_limits(limits: Limits) -> Observer {
        Observer { limits, ..Observer::default() }
    }

    /// A frame the client sent.
    pub fn observe_from_client(&mut self, frame: &[u8]) -> Observed {
        self.observe(Side::Client, frame)
    }

    /// A frame the agent sent.
    pub fn observe_from_agent(&mut self, frame: &[u8]) -> Observed {
        self.observe(Side::Agent, frame)
    }

    /// A frame `from` sent: what it was, after its effects on the open requests, sessions and
    /// turns. Never panics, whatever the bytes.
    pub fn observe(&mut self, from: Side, frame: &[u8]) -> Observed {
        if let Some(entries) = batch(frame) {
            let mut batch = Observed::of(FrameKind::Batch);
            for entry in entries {
                let one = self.message(from, entry.get().as_bytes());
                batch.turn_began = batch.turn_began.or(one.turn_began);
                batch.turn_ended = batch.turn_ended.or(one.turn_ended);
                batch.announced = batch.announced.or(one.announced);
            }
            return batch;
        }
        self.message(from, frame)
    }

    /// What `frame` from `from` is on its own, as if it were the first frame of a connection
    /// (its method and session; a response answers nothing): for a relay that must judge a
    /// message before it lets it through, and observe it only then.
    pub fn read(from: Side, frame: &[u8]) -> Observed {
        Observer::new().observe(from, frame)
    }

    /// The requests `from` sent that are not answered yet, by id.
    pub fn open_requests(&self, from: Side) -> impl Iterator<Item = &OpenRequest> {
        let key = SideKey::from(from);
        self.open.range((key, RequestId::Null)..).take_while(move |((k, _), _)| *k == key).flat_map(|(_, q)| q.iter())
    }

    /// How many requests `from` sent that are not answered yet.
    pub fn open_request_count(&self, from: Side) -> usize {
        self.open_count[index(from)]
    }

    /// The oldest open request `from` sent with `id` (exactly that id).
    pub fn open_request(&self, from: Side, id: &RequestId) -> Option<&OpenRequest> {
        self.open.get(&(from.into(), id.clone())).and_then(VecDeque::front)
    }

    /// Whether `session` was announced (rule 4).
    pub fn has_session(&self, session: &str) -> bool {
        self.sessions.contains(session)
    }

    /// The sessions announced, in order.
    pub fn sessions(&self) -> impl Iterator<Item = &str> {
        self.sessions.iter().map(|s| &**s)
    }

    /// The open turn of `session`.
    pub fn turn(&self, session: &str) -> Option<&Turn> {
        self.turns.get(session)
    }

    /// The open turns, by session.
    pub fn turns(&self) -> impl Iterator<Item = (&str, &Turn)> {
        self.turns.iter().map(|(s, t)| (&**s, t))
    }

    /// Whether no turn is open.
    pub fn no_turn_open(&self) -> bool {
        self.turns.is_empty()
    }

    /// What was not tracked, and how often.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    fn message(&mut self, from: Side, text: &[u8]) -> Observed {
        match parse(text) {
            Incoming::Request { id, method, params } => self.request(from, id, &method, params),
            Incoming::Notification { method, params } => self.notification(from, &method, params),
            Incoming::Response { id, outcome } => self.response(from, id, outcome.ok()),
            Incoming::Invalid { .. } | Incoming::MalformedResponse { .. } => {
                self.counters.invalid += 1;
                Observed::of(FrameKind::Invalid)
            }
        }
    }

    /// A key of the peer's kept only within [`Limits::max_key_len`].
    fn key(&mut self, text: &str) -> Option<Arc<str>> {
        if text.len() > self.limits.max_key_len {
            self.counters.keys_too_long += 1;
            return None;
        }
        Some(Arc::from(text))
    }

    fn session_of(&mut self, params: Option<&RawValue>) -> Option<Arc<str>> {
        let peek: SessionPeek<'_> = serde_json::from_str(params?.get()).ok()?;
        let session = peek.session_id?;
        self.key(&session)
    }

    fn request(&mut self, from: Side, id: RequestId, wire: &str, params: Option<&RawValue>) -> Observed {
        let method = Method::from_wire(wire);
        let session = self.session_of(params);
        let mut observed =
            Observed { method, id: Some(id.clone()), session: session.clone(), ..Observed::of(FrameKind::Request) };
        if id == RequestId::Null {
            return observed;
        }
        if self.open_count[index(from)] >= self.limits.max_open_requests {
            self.counters.requests_untracked += 1;
            return observed;
        }
        let id_fits = match &id {
            RequestId::Str(s) => s.len() <= self.limits.max_key_len,
            _ => true,
        };
        // A method of the table is kept whatever the bound (its name is the table's).
        let wire = match method {
            Some(known) => Some(Arc::from(known.row().wire)),
            None => self.key(wire),
        };
        let (Some(wire), true) = (wire, id_fits) else {
            self.counters.keys_too_long += u64::from(!id_fits);
            return observed;
        };
        self.open_count[index(from)] += 1;
        // A turn waits only on prompts an answer can reach (tracked, with an id): so a
        // session's turn counts exactly its open prompts, and an answer or idle can end it.
        if from == Side::Client
            && method == Some(Method::Prompt)
            && let Some(session) = &session
            && self.begin_turn(session)
        {
            observed.turn_began = Some(session.clone());
        }
        let request = OpenRequest { from, id: id.clone(), method, wire, session };
        self.open.entry((from.into(), id)).or_default().push_back(request);
        observed
    }

    /// A prompt of `session`: opens its turn or joins the open one; `false` when past the bound.
    fn begin_turn(&mut self, session: &Arc<str>) -> bool {
        if let Some(turn) = self.turns.get_mut(session) {
            turn.prompts = turn.prompts.saturating_add(1);
            return true;
        }
        if self.turns.len() >= self.limits.max_turns {
            self.counters.turns_untracked += 1;
            return false;
        }
        let turn = Turn { state: TurnState::Prompted, prompts: 1, cancel_requested: false };
        self.turns.insert(session.clone(), turn);
        true
    }

    fn notification(&mut self, from: Side, wire: &str, params: Option<&RawValue>) -> Observed {
        let method = Method::from_wire(wire);
        let mut observed = Observed { method, ..Observed::of(FrameKind::Notification) };
        match (from, method) {
            (Side::Agent, Some(Method::SessionUpdate)) => {
                let Some(peek) = params.and_then(|p| serde_json::from_str::<UpdatePeek<'_>>(p.get()).ok()) else {
                    return observed;
                };
                let Some(session) = peek.session_id.and_then(|s| self.key(&s)) else { return observed };
                let state = peek.update.filter(|u| u.session_update.as_deref() == Some(STATE_UPDATE));
                if let Some(update) = state {
                    observed.turn_ended = self.state_update(&session, &update);
                }
                observed.session = Some(session);
            }
            (Side::Client, Some(Method::Cancel)) => {
                observed.session = self.session_of(params);
                if let Some(turn) = observed.session.as_ref().and_then(|s| self.turns.get_mut(s)) {
                    turn.cancel_requested = true;
                }
            }
            _ => observed.session = self.session_of(params),
        }
        observed
    }

    /// A v2 `state_update` of `session` (rule 8).
    fn state_update(&mut self, session: &Arc<str>, update: &StatePeek<'_>) -> Option<TurnEnd> {
        let state = match update.state.as_deref() {
            Some(IDLE) => {
                let turn = self.turns.get_mut(session)?;
                if turn.prompts > 0 {
                    // Prompts the agent had not read when it reported idle ("ready to process a
                    // new prompt"): the work that ran ended, and the session's next turn waits
                    // on them (their acknowledgement runs it, an error answer ends it).
                    *turn = Turn { state: TurnState::Prompted, prompts: turn.prompts, cancel_requested: false };
                } else {
                    self.turns.remove(session);
                }
                let stop_reason = update.stop_reason.as_deref().and_then(|r| self.key(r));
                return Some(TurnEnd { session: session.clone(), stop_reason, error: false });
            }
            Some(RUNNING) => TurnState::Running,
            Some(REQUIRES_ACTION) => TurnState::RequiresAction,
            _ => return None,
        };
        if let Some(turn) = self.turns.get_mut(session) {
            turn.state = state;
        } else if self.turns.len() < self.limits.max_turns {
            self.turns.insert(session.clone(), Turn { state, prompts: 0, cancel_requested: false });
        } else {
            self.counters.turns_untracked += 1;
        }
        None
    }

    /// The oldest open request of `asker` with `id`, or (rule 3) with the same id at the other
    /// wire type; removed.
    fn take_open(&mut self, asker: Side, id: &RequestId) -> Option<OpenRequest> {
        let loose = match id {
            RequestId::Number(n) => Some(RequestId::Str(Arc::from(n.to_string()))),
            RequestId::Str(s) => s.parse::<i64>().ok().filter(|n| n.to_string() == **s).map(RequestId::Number),
            RequestId::Null => return None,
        };
        let key = [Some(id.clone()), loose]
            .into_iter()
            .flatten()
            .find(|i| self.open.contains_key(&(asker.into(), i.clone())))?;
        if key != *id {
            self.counters.loose_ids += 1;
        }
        let map_key = (asker.into(), key);
        let queue = self.open.get_mut(&map_key)?;
        let request = queue.pop_front();
        if queue.is_empty() {
            self.open.remove(&map_key);
        }
        self.open_count[index(asker)] -= usize::from(request.is_some());
        request
    }

    fn response(&mut self, from: Side, id: RequestId, result: Option<&RawValue>) -> Observed {
        let mut observed = Observed { id: Some(id.clone()), ..Observed::of(FrameKind::Response) };
        let asker = from.peer();
        let request = self.take_open(asker, &id);
        if request.is_none() && id != RequestId::Null {
            self.counters.unmatched_responses += 1;
        }
        let peek = result.map(|r| serde_json::from_str::<ResultPeek<'_>>(r.get()).unwrap_or_default());
        let announced = match (&peek, &request) {
            (Some(ResultPeek { session_id: Some(s), .. }), _) => self.key(s),
            (Some(_), Some(r)) if matches!(r.method, Some(Method::LoadSession | Method::ResumeSession)) => {
                r.session.clone()
            }
            _ => None,
        };
        if let Some(session) = &announced {
            self.announce(session);
        }
        if let Some(request) = &request
            && from == Side::Agent
            && request.method == Some(Method::Prompt)
            && let Some(session) = &request.session
        {
            observed.turn_ended = self.prompt_answered(session, peek.as_ref());
        }
        observed.session = request.as_ref().and_then(|r| r.session.clone()).or_else(|| announced.clone());
        observed.announced = announced;
        observed.answered = request;
        observed
    }

    fn announce(&mut self, session: &Arc<str>) {
        if self.sessions.contains(session) {
            return;
        }
        if self.sessions.len() >= self.limits.max_sessions {
            self.counters.sessions_untracked += 1;
            return;
        }
        self.sessions.insert(session.clone());
    }

    /// The answer to a prompt of `session` (`result`: `None` for an error), rules 7 and 8.
    fn prompt_answered(&mut self, session: &Arc<str>, result: Option<&ResultPeek<'_>>) -> Option<TurnEnd> {
        let turn = self.turns.get_mut(session)?;
        turn.prompts = turn.prompts.saturating_sub(1);
        let acknowledged = result.is_some_and(|r| r.object && !r.stop_reason_key);
        if acknowledged {
            if turn.state == TurnState::Prompted {
                turn.state = TurnState::Running;
            }
            return None;
        }
        if turn.prompts > 0 || turn.state != TurnState::Prompted {
            // Another prompt of the turn is unanswered, or a v2 turn of it runs on.
            return None;
        }
        self.turns.remove(session);
        let stop_reason = result.and_then(|r| r.stop_reason.as_deref()).and_then(|r| self.key(r));
        Some(TurnEnd { session: session.clone(), stop_reason, error: result.is_none() })
    }
}

/// The entries of a non-empty JSON array frame; `None` for anything else.
fn batch(frame: &[u8]) -> Option<Vec<&RawValue>> {
    let start = frame.iter().position(|b| !b.is_ascii_whitespace())?;
    if frame[start] != b'[' {
        return None;
    }
    let entries: Vec<&RawValue> = serde_json::from_slice(frame).ok()?;
    (!entries.is_empty()).then_some(entries)
}

/// Params, as far as their session goes.
#[derive(Deserialize)]
struct SessionPeek<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
}

/// A `session/update`'s params, as far as a v2 state update goes.
#[derive(Deserialize)]
struct UpdatePeek<'a> {
    #[serde(borrow, default, rename = "sessionId")]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    update: Option<StatePeek<'a>>,
}

#[derive(Deserialize)]
struct StatePeek<'a> {
    #[serde(borrow, default, rename = "sessionUpdate")]
    session_update: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    state: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "stopReason", deserialize_with = "str_or_none")]
    stop_reason: Option<Cow<'a, str>>,
}

/// A result, as far as sessions and turns go.
#[derive(Default)]
struct ResultPeek<'a> {
    /// It is a JSON object.
    object: bool,
    /// Its `sessionId`, when a string.
    session_id: Option<Cow<'a, str>>,
    /// It has a `stopReason` key (whatever its value).
    stop_reason_key: bool,
    /// Its `stopReason`, when a string.
    stop_reason: Option<Cow<'a, str>>,
}

impl<'de> Deserialize<'de> for ResultPeek<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ResultVisitor)
    }
}

struct ResultVisitor;

impl<'de> Visitor<'de> for ResultVisitor {
    type Value = ResultPeek<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut peek = ResultPeek { object: true, ..ResultPeek::default() };
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match &*key {
                "sessionId" => peek.session_id = map.next_value::<StrOrNone<'de>>()?.0,
                "stopReason" => {
                    peek.stop_reason_key = true;
                    peek.stop_reason = map.next_value::<StrOrNone<'de>>()?.0;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(peek)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ResultPeek::default())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(ResultPeek::default())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ResultPeek::default())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ResultPeek::default())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ResultPeek::default())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ResultPeek::default())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ResultPeek::default())
    }
}

/// Any JSON value, kept only when it is a string.
struct StrOrNone<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for StrOrNone<'de> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrVisitor).map(StrOrNone)
    }
}

fn str_or_none<'de, D: de::Deserializer<'de>>(deserializer: D) -> Result<Option<Cow<'de, str>>, D::Error> {
    StrOrNone::deserialize(deserializer).map(|s| s.0)
}

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Option<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(v.to_owned())))
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}
