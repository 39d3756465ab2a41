//! Wire-level invariants of one peer, judged from the frames it emitted and consumed.
//!
//! A [`WireCheck`] watches one peer: the bytes it **emitted** (every frame must be a JSON-RPC
//! 2.0 message) and the bytes it **consumed** (mirrored through the connection's framer, so the checker
//! knows exactly which requests the peer has read). From those it finds [`Violation`]s:
//!
//! * a frame that is not newline-terminated, not JSON, not JSON-RPC 2.0, or not a valid message;
//! * more responses for an id than requests with that id were consumed (a response to an id
//!   never read is one of them), or more `id: null` responses than frames that could only be
//!   answered so;
//! * agent side: a `session/update` for a session no successful `session/new`, `session/load`
//!   or `session/resume` response announced (history replay during a load excepted), and an
//!   `fs/*` or `terminal/*` request to a client that did not advertise it;
//! * once everything settled ([`WireCheck::settle`]): a consumed request not answered exactly
//!   once (duplicates the peer dropped and requests still in flight aside).
//!
//! JSON-RPC batch arrays are judged entry by entry, both ways: an emitted array must be
//! non-empty and each entry a valid message; a consumed array counts its entries as frames.
//! The wire cannot tell whether the peer took a consumed array apart (v2) or refused it whole
//! with one `id: null` error (v1, over its limits), so the array also counts as a frame
//! answerable with `id: null`, and its requests may settle either way: answered each, or not
//! at all.
//!
//! The deterministic simulation of both peers (the `proptests` crate) runs one per peer and
//! fails on the first violation; `acp replay --check` runs one per direction of a recorded
//! session and reports them all. The checker is plain data: no clock, no I/O.
//!
//! Its memory is bounded whatever the peer does, but for the requests left unanswered, which
//! a caller bounds (the simulation by its steps, the replay by its tracking cap):
//!
//! | what | bound | past it |
//! |---|---|---|
//! | ids whose requests were all answered | the last [`ANSWERED_WINDOW`] such ids, with their counts | forgotten: another response for one is still a violation ([`Violation::ExtraResponse`], with `requests: 0` instead of its counts); a request that uses it again starts afresh |
//! | responses to ids no request used | nothing kept | each one is a violation |
//! | sessions announced (agent) | [`MAX_ANNOUNCED`] | the announcing response is a violation ([`Violation::TooManySessions`]), and from then on an update for a session not remembered is not judged (it may be one not tracked) |

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::ops::ControlFlow;

use serde_json::Value;

use crate::Side;
use crate::framer::{FrameEvent, Framer};
use crate::jsonrpc::{Incoming, RequestId, parse};

/// A request the peer consumed and has not answered yet.
#[derive(Debug, Clone)]
struct Consumed {
    method: String,
    params: Value,
}

/// A request the peer answered, handed to the caller of [`WireCheck::emitted`] for checks of
/// its own.
#[derive(Debug, Clone)]
pub struct Answered {
    /// The request's method (empty for an invalid request that echoed an id).
    pub method: String,
    /// The request's params (`null` when absent).
    pub params: Value,
    /// The result, or `None` for an error response.
    pub result: Option<Value>,
}

/// A broken rule. `Display` says what happened, in a sentence.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Violation {
    /// Emitted output that does not end with a newline.
    NotNewlineTerminated,
    /// A frame that is not JSON.
    NotJson {
        /// The parser's message.
        error: String,
    },
    /// A JSON frame without `"jsonrpc":"2.0"`.
    NotJsonRpc,
    /// A JSON-RPC frame that is not a valid request, notification or response.
    InvalidMessage {
        /// Why.
        reason: String,
    },
    /// More `id: null` responses than frames that could only be answered so.
    UnpromptedNullResponse,
    /// More responses for an id than requests with that id were read.
    ExtraResponse {
        /// The id, as on the wire.
        id: RequestId,
        /// Responses emitted for it so far.
        responses: u64,
        /// Requests with that id read.
        requests: u64,
    },
    /// Agent: a `session/update` for a session that was never announced.
    UnannouncedSession {
        /// The session id.
        session: String,
    },
    /// Agent: a request the client did not advertise it serves.
    NotAdvertised {
        /// The method.
        method: String,
    },
    /// Agent: a response announced a session past [`MAX_ANNOUNCED`]; updates for sessions
    /// not remembered are not judged from then on.
    TooManySessions {
        /// The session not remembered.
        session: String,
    },
    /// After settling: requests read and not answered exactly once.
    Unsettled {
        /// Requests read.
        requests: u64,
        /// Responses emitted (`id: null` ones aside).
        answered: u64,
        /// Duplicates the peer reported dropping.
        duplicates: u64,
        /// Requests still in flight.
        in_flight: u64,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::NotNewlineTerminated => f.write_str("output not newline-terminated"),
            Violation::NotJson { error } => write!(f, "a frame that is not JSON ({error})"),
            Violation::NotJsonRpc => f.write_str("a frame without \"jsonrpc\":\"2.0\""),
            Violation::InvalidMessage { reason } => write!(f, "an invalid JSON-RPC message ({reason})"),
            Violation::UnpromptedNullResponse => f.write_str("more id-null responses than unanswerable frames"),
            Violation::ExtraResponse { id, requests: 0, .. } => {
                write!(f, "a response to id {id}, which no request awaiting an answer used")
            }
            Violation::ExtraResponse { id, responses, requests } => {
                write!(f, "{responses} responses for id {id} but {requests} requests read")
            }
            Violation::UnannouncedSession { session } => {
                write!(f, "session/update for `{session}` before the session was announced")
            }
            Violation::NotAdvertised { method } => write!(f, "sent {method} to a client that did not advertise it"),
            Violation::TooManySessions { session } => write!(
                f,
                "announced session `{session}` past the {MAX_ANNOUNCED} sessions the check remembers: updates of \
                 sessions not remembered are not judged from here"
            ),
            Violation::Unsettled { requests, answered, duplicates, in_flight } => write!(
                f,
                "{requests} requests read, {answered} answered, {duplicates} duplicates dropped, {in_flight} in flight"
            ),
        }
    }
}

/// Ids whose requests were all answered that a [`WireCheck`] remembers (the most recent).
pub const ANSWERED_WINDOW: usize = 1024;
/// Sessions an agent's [`WireCheck`] remembers as announced.
pub const MAX_ANNOUNCED: usize = 16384;

/// Requests consumed and responses emitted with one id.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    /// Requests consumed (invalid frames that echo an id count too).
    requests: u64,
    /// Responses emitted.
    responses: u64,
    /// When all its requests were answered: the number of that answer among all those that
    /// answered an id in full (its place in the window); `None` while one is open.
    answered_at: Option<u64>,
}

/// What one peer did on the wire. See the [module docs](self).
#[derive(Debug)]
pub struct WireCheck {
    side: Side,
    mirror: Framer,
    /// Per id: the ids with a request open, and the last [`ANSWERED_WINDOW`] answered in full.
    counts: BTreeMap<RequestId, Counts>,
    /// The ids answered in full, oldest first, each with its `answered_at`: at most
    /// [`ANSWERED_WINDOW`] (an id answered again since is skipped when it leaves).
    answered: VecDeque<(RequestId, u64)>,
    /// Ids answered in full so far.
    answered_ids: u64,
    /// The requests consumed per id and not answered yet, oldest first. An answer goes to the
    /// oldest: a peer reads an id again once it answered it (a fault re-delivering a frame, a
    /// client re-using ids), and its second answer must announce like the first. A copy the
    /// peer dropped as a duplicate of one in flight stays here (the wire cannot tell).
    open: BTreeMap<RequestId, VecDeque<Consumed>>,
    /// Frames consumed that can only be answered with `id: null`.
    null_answerable: u64,
    null_responses: u64,
    /// Agent: sessions announced on the wire, at most [`MAX_ANNOUNCED`].
    announced: BTreeSet<String>,
    /// Agent: a session was announced past [`MAX_ANNOUNCED`] (updates of sessions not
    /// remembered are not judged since).
    announced_overflow: bool,
    /// Agent: the client's advertised capabilities.
    client_caps: Option<Value>,
    requests_total: u64,
    /// Requests consumed inside batch arrays (part of `requests_total`).
    batched_requests: u64,
    responses_total: u64,
    frames_emitted: u64,
}

impl WireCheck {
    /// A checker of a peer playing `side`, whose frame limit is `max_frame_len` (longer
    /// consumed frames count as answerable with `id: null` only).
    pub fn new(side: Side, max_frame_len: usize) -> WireCheck {
        WireCheck {
            side,
            mirror: Framer::new(max_frame_len),
            counts: BTreeMap::new(),
            answered: VecDeque::new(),
            answered_ids: 0,
            open: BTreeMap::new(),
            null_answerable: 0,
            null_responses: 0,
            announced: BTreeSet::new(),
            announced_overflow: false,
            client_caps: None,
            requests_total: 0,
            batched_requests: 0,
            responses_total: 0,
            frames_emitted: 0,
        }
    }

    /// Agent side: the client's capabilities (otherwise taken from the `initialize` request
    /// consumed).
    pub fn set_client_caps(&mut self, caps: Value) {
        self.client_caps = Some(caps);
    }

    /// Requests consumed so far.
    pub fn requests_total(&self) -> u64 {
        self.requests_total
    }

    /// Responses emitted so far.
    pub fn responses_total(&self) -> u64 {
        self.responses_total
    }

    /// Frames emitted so far.
    pub fn frames_emitted(&self) -> u64 {
        self.frames_emitted
    }

    /// The requests consumed and not answered yet: id and method (an id read again before
    /// its answers were emitted appears once per copy unanswered).
    pub fn open_requests(&self) -> impl Iterator<Item = (&RequestId, &str)> {
        self.open_requests_with_params().map(|(id, method, _)| (id, method))
    }

    /// [`open_requests`](Self::open_requests) with the params of each (`null` when absent).
    pub fn open_requests_with_params(&self) -> impl Iterator<Item = (&RequestId, &str, &Value)> {
        self.open.iter().flat_map(|(id, q)| q.iter().map(move |c| (id, c.method.as_str(), &c.params)))
    }

    /// Bytes the peer consumed (exactly what it reported consuming), in any chunking.
    pub fn consumed(&mut self, bytes: &[u8]) {
        let mut frames = Vec::new();
        let _ = self.mirror.push(bytes, |ev| {
            frames.push(match ev {
                FrameEvent::Frame(f) => Some(f.to_vec()),
                FrameEvent::Oversized { .. } => None,
            });
            ControlFlow::Continue(())
        });
        for f in frames {
            self.consumed_frame(f.as_deref());
        }
    }

    /// The peer saw the end of its input.
    pub fn consumed_eof(&mut self) {
        let mut frames = Vec::new();
        self.mirror.finish(|ev| {
            if let FrameEvent::Frame(f) = ev {
                frames.push(f.to_vec());
            }
            ControlFlow::Continue(())
        });
        for f in frames {
            self.consumed_frame(Some(&f));
        }
    }

    fn consumed_frame(&mut self, frame: Option<&[u8]>) {
        let Some(frame) = frame else {
            self.null_answerable += 1;
            return;
        };
        if let Some(entries) = batch_entries(frame) {
            // Refused whole (one `id: null` error), or taken apart entry by entry.
            self.null_answerable += 1;
            let before = self.requests_total;
            for entry in entries {
                self.consumed_message(entry.get().as_bytes());
            }
            self.batched_requests += self.requests_total - before;
            return;
        }
        self.consumed_message(frame);
    }

    fn consumed_message(&mut self, frame: &[u8]) {
        match parse(frame) {
            Incoming::Request { id: RequestId::Null, .. } | Incoming::Invalid { id: RequestId::Null, .. } => {
                self.null_answerable += 1
            }
            Incoming::Request { id, method, params } => {
                let params: Value = params.and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or(Value::Null);
                if self.side == Side::Agent && method == "initialize" && self.client_caps.is_none() {
                    self.client_caps = Some(params["clientCapabilities"].clone());
                }
                self.count_request(id, method.into_owned(), params);
            }
            Incoming::Invalid { id, .. } => self.count_request(id, String::new(), Value::Null),
            _ => {}
        }
    }

    fn count_request(&mut self, id: RequestId, method: String, params: Value) {
        let counts = self.counts.entry(id.clone()).or_default();
        counts.requests += 1;
        counts.answered_at = None;
        self.requests_total += 1;
        self.open.entry(id).or_default().push_back(Consumed { method, params });
    }

    /// Bytes the peer emitted (whole frames): the violations found in them, in order.
    /// `answered` is told of each request answered.
    pub fn emitted(&mut self, bytes: &[u8], answered: &mut impl FnMut(Answered)) -> Vec<Violation> {
        let mut found = Vec::new();
        if !bytes.is_empty() && !bytes.ends_with(b"\n") {
            found.push(Violation::NotNewlineTerminated);
        }
        for frame in bytes.split(|b| *b == b'\n').filter(|f| !f.is_empty()) {
            self.frames_emitted += 1;
            if let Err(v) = self.emitted_frame(frame, answered) {
                found.push(v);
            }
        }
        found
    }

    fn emitted_frame(&mut self, frame: &[u8], answered: &mut impl FnMut(Answered)) -> Result<(), Violation> {
        if let Some(entries) = batch_entries(frame) {
            for entry in entries {
                self.emitted_message(entry.get().as_bytes(), answered)?;
            }
            return Ok(());
        }
        self.emitted_message(frame, answered)
    }

    fn emitted_message(&mut self, frame: &[u8], answered: &mut impl FnMut(Answered)) -> Result<(), Violation> {
        let json: Value = serde_json::from_slice(frame).map_err(|e| Violation::NotJson { error: e.to_string() })?;
        if json["jsonrpc"] != "2.0" {
            return Err(Violation::NotJsonRpc);
        }
        let agent = self.side == Side::Agent;
        match parse(frame) {
            Incoming::Request { method, .. } if agent => self.check_gated_request(&method),
            Incoming::Request { .. } => Ok(()),
            Incoming::Notification { method, .. } if agent && method == "session/update" => {
                let s = json["params"]["sessionId"].as_str().unwrap_or_default();
                let loading = self.open.values().flatten().any(|c| {
                    (c.method == "session/load" || c.method == "session/resume")
                        && c.params["sessionId"].as_str() == Some(s)
                });
                if self.announced.contains(s) || loading || self.announced_overflow {
                    Ok(())
                } else {
                    Err(Violation::UnannouncedSession { session: s.to_owned() })
                }
            }
            Incoming::Notification { .. } => Ok(()),
            Incoming::Response { id, outcome } => {
                let result = outcome.ok().and_then(|r| serde_json::from_str(r.get()).ok());
                self.response(id, result, answered)
            }
            Incoming::Invalid { error, .. } => {
                Err(Violation::InvalidMessage { reason: error.data.map_or(error.message, |d| d.to_string()) })
            }
            Incoming::MalformedResponse { reason } => Err(Violation::InvalidMessage { reason }),
        }
    }

    fn response(
        &mut self,
        id: RequestId,
        result: Option<Value>,
        answered: &mut impl FnMut(Answered),
    ) -> Result<(), Violation> {
        self.responses_total += 1;
        if id == RequestId::Null {
            self.null_responses += 1;
            return if self.null_responses <= self.null_answerable {
                Ok(())
            } else {
                Err(Violation::UnpromptedNullResponse)
            };
        }
        // An id no request used is not remembered: each response to one is a violation.
        let Some(counts) = self.counts.get_mut(&id) else {
            return Err(Violation::ExtraResponse { id, responses: 1, requests: 0 });
        };
        counts.responses += 1;
        let Counts { requests, responses, .. } = *counts;
        if responses > requests {
            return Err(Violation::ExtraResponse { id, responses, requests });
        }
        let req = self.open.get_mut(&id).and_then(VecDeque::pop_front);
        if self.open.get(&id).is_some_and(VecDeque::is_empty) {
            self.open.remove(&id);
        }
        if responses == requests {
            self.answered_in_full(id);
        }
        let Some(req) = req else { return Ok(()) };
        let announced = if self.side == Side::Agent { self.announce(&req, result.as_ref()) } else { Ok(()) };
        answered(Answered { method: req.method, params: req.params, result });
        announced
    }

    /// Every request read with `id` is answered: the id joins the window of those remembered,
    /// and the oldest one leaves it (forgotten, unless read again since).
    fn answered_in_full(&mut self, id: RequestId) {
        let at = self.answered_ids;
        self.answered_ids += 1;
        if let Some(counts) = self.counts.get_mut(&id) {
            counts.answered_at = Some(at);
        }
        self.answered.push_back((id, at));
        if self.answered.len() > ANSWERED_WINDOW
            && let Some((old, at)) = self.answered.pop_front()
            && self.counts.get(&old).is_some_and(|c| c.answered_at == Some(at))
        {
            self.counts.remove(&old);
        }
        debug_assert!(self.answered.len() <= ANSWERED_WINDOW);
        debug_assert!(self.counts.len() <= self.open.len() + ANSWERED_WINDOW);
    }

    /// Agent: the sessions a successful answer announces; a violation past [`MAX_ANNOUNCED`].
    fn announce(&mut self, req: &Consumed, result: Option<&Value>) -> Result<(), Violation> {
        let session = match (req.method.as_str(), result) {
            ("session/new", Some(r)) => r["sessionId"].as_str(),
            ("session/load" | "session/resume", Some(_)) => req.params["sessionId"].as_str(),
            _ => None,
        };
        let Some(s) = session else { return Ok(()) };
        if self.announced.contains(s) {
            return Ok(());
        }
        if self.announced.len() >= MAX_ANNOUNCED {
            self.announced_overflow = true;
            return Err(Violation::TooManySessions { session: s.to_owned() });
        }
        self.announced.insert(s.to_owned());
        Ok(())
    }

    fn check_gated_request(&self, method: &str) -> Result<(), Violation> {
        let caps = self.client_caps.as_ref();
        let flag = |path: &[&str]| {
            let mut v = caps;
            for p in path {
                v = v.and_then(|v| v.get(p));
            }
            v == Some(&Value::Bool(true))
        };
        let allowed = match method {
            "fs/read_text_file" => flag(&["fs", "readTextFile"]),
            "fs/write_text_file" => flag(&["fs", "writeTextFile"]),
            m if m.starts_with("terminal/") => flag(&["terminal"]),
            _ => true,
        };
        if allowed { Ok(()) } else { Err(Violation::NotAdvertised { method: method.to_owned() }) }
    }

    /// Final accounting once everything settled: every consumed request was answered once,
    /// except the duplicates the peer dropped and those still in flight (and the requests of
    /// batch arrays the peer refused whole: see the [module docs](self)). After a close,
    /// requests in flight are never answered, so only "at most one" is checked.
    pub fn settle(&self, duplicates_dropped: u64, in_flight: usize, closed: bool) -> Option<Violation> {
        let answered = self.responses_total - self.null_responses;
        let unsettled = Violation::Unsettled {
            requests: self.requests_total,
            answered,
            duplicates: duplicates_dropped,
            in_flight: in_flight as u64,
        };
        let ok = if closed {
            answered <= self.requests_total
        } else {
            let settled = answered + duplicates_dropped + in_flight as u64;
            (self.requests_total - self.batched_requests..=self.requests_total).contains(&settled)
        };
        if ok { None } else { Some(unsettled) }
    }
}

/// The entries of a non-empty JSON array frame (a batch); `None` for anything else (an empty
/// array is an invalid message like any other non-object).
fn batch_entries(frame: &[u8]) -> Option<Vec<&serde_json::value::RawValue>> {
    let text = std::str::from_utf8(frame).ok()?;
    let entries: Vec<&serde_json::value::RawValue> = serde_json::from_str(text).ok()?;
    (!entries.is_empty()).then_some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emit(check: &mut WireCheck, frame: &str) -> Vec<String> {
        let bytes = format!("{frame}\n");
        check.emitted(bytes.as_bytes(), &mut |_| {}).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn an_agent_answering_an_id_it_never_read_or_updating_an_unknown_session_is_caught() {
        let mut agent = WireCheck::new(Side::Agent, 1 << 20);
        agent.consumed(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{}}\n");
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
        assert_eq!(emit(&mut agent, update), ["session/update for `s1` before the session was announced"]);
        assert!(emit(&mut agent, r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#).is_empty());
        assert!(emit(&mut agent, update).is_empty());
        assert_eq!(
            emit(&mut agent, r#"{"jsonrpc":"2.0","id":9,"result":{}}"#),
            ["a response to id 9, which no request awaiting an answer used"]
        );
        assert_eq!(emit(&mut agent, "nope")[0].split(" (").next(), Some("a frame that is not JSON"));
        assert!(agent.settle(0, 0, false).is_some(), "two answers for one request read");
    }

    #[test]
    fn an_id_read_twice_before_its_answers_announces_with_its_second_answer() {
        // A fault re-delivers `session/new` id 2 after the agent answered it (the answer still
        // queued): the first answer is an error, the second announces `s8`.
        let mut agent = WireCheck::new(Side::Agent, 1 << 20);
        let request = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/new\",\"params\":{\"cwd\":\"/r8\"}}\n";
        agent.consumed(request);
        agent.consumed(request);
        assert_eq!(agent.open_requests().count(), 2);
        let error = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}"#;
        assert!(emit(&mut agent, error).is_empty());
        assert_eq!(agent.open_requests().collect::<Vec<_>>(), [(&RequestId::Number(2), "session/new")]);
        assert!(emit(&mut agent, r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s8"}}"#).is_empty());
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s8","update":{}}}"#;
        assert!(emit(&mut agent, update).is_empty(), "the second answer announced s8");
        assert_eq!(agent.open_requests().count(), 0);
        assert!(agent.settle(0, 0, false).is_none());
    }

    #[test]
    fn batch_arrays_are_judged_entry_by_entry() {
        let mut agent = WireCheck::new(Side::Agent, 1 << 20);
        let new = r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{}}"#;
        let ext = r#"{"jsonrpc":"2.0","id":2,"method":"_x","params":{}}"#;
        agent.consumed(format!("[{new},{ext},7]\n").as_bytes());
        assert_eq!(agent.requests_total(), 2);
        // Taken apart: one array answers both and the invalid entry; it announces `s1`.
        let answers = r#"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}]"#;
        assert!(emit(&mut agent, answers).is_empty());
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{}}}"#;
        assert!(emit(&mut agent, update).is_empty());
        assert!(agent.settle(0, 0, false).is_none());
        // An entry that is no message, an empty answer array, a second answer: all caught.
        assert_eq!(emit(&mut agent, r#"[{"id":3}]"#), ["a frame without \"jsonrpc\":\"2.0\""]);
        assert_eq!(emit(&mut agent, "[]").len(), 1);
        assert_eq!(
            emit(&mut agent, r#"[{"jsonrpc":"2.0","id":2,"result":{}}]"#),
            ["2 responses for id 2 but 1 requests read"]
        );

        // Refused whole (a v1 peer): one `id: null` error settles it too, but no more than one.
        let mut v1 = WireCheck::new(Side::Agent, 1 << 20);
        v1.consumed(format!("[{new},{ext}]\n").as_bytes());
        let refusal = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request"}}"#;
        assert!(emit(&mut v1, refusal).is_empty());
        assert_eq!(emit(&mut v1, refusal), ["more id-null responses than unanswerable frames"]);
        assert!(v1.settle(0, 0, false).is_none());
    }

    fn request(id: usize, method: &str, params: &str) -> String {
        format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n")
    }

    #[test]
    fn answered_ids_are_remembered_in_a_window_and_an_extra_answer_is_caught_on_both_sides_of_it() {
        let mut client = WireCheck::new(Side::Client, 1 << 20);
        let answers = 5 * ANSWERED_WINDOW;
        for id in 0..answers {
            client.consumed(request(id, "fs/read_text_file", "{}").as_bytes());
            assert!(emit(&mut client, &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)).is_empty());
            assert!(client.counts.len() <= ANSWERED_WINDOW, "{} ids remembered after {id}", client.counts.len());
        }
        assert_eq!(client.answered.len(), ANSWERED_WINDOW);
        // Within the window: the counts; past it: still a violation, without them.
        let last = answers - 1;
        assert_eq!(
            emit(&mut client, &format!(r#"{{"jsonrpc":"2.0","id":{last},"result":{{}}}}"#)),
            [format!("2 responses for id {last} but 1 requests read")]
        );
        assert_eq!(
            emit(&mut client, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
            ["a response to id 0, which no request awaiting an answer used"]
        );
        // A forgotten id read again is a request like any other.
        client.consumed(request(0, "fs/read_text_file", "{}").as_bytes());
        assert!(emit(&mut client, r#"{"jsonrpc":"2.0","id":0,"result":{}}"#).is_empty());
        assert!(client.open_requests().next().is_none());
        // Stray responses leave nothing behind.
        for id in answers..answers + 100 {
            assert_eq!(emit(&mut client, &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)).len(), 1);
        }
        assert!(client.counts.len() <= ANSWERED_WINDOW);
    }

    #[test]
    fn an_id_answered_then_read_again_stays_remembered_until_answered() {
        let mut agent = WireCheck::new(Side::Agent, 1 << 20);
        agent.consumed(request(1, "_x", "{}").as_bytes());
        assert!(emit(&mut agent, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_empty());
        agent.consumed(request(1, "_x", "{}").as_bytes());
        // The window moves on while id 1 waits for its second answer.
        for id in 2..ANSWERED_WINDOW + 10 {
            agent.consumed(request(id, "_x", "{}").as_bytes());
            assert!(emit(&mut agent, &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)).is_empty());
        }
        assert_eq!(agent.open_requests().collect::<Vec<_>>(), [(&RequestId::Number(1), "_x")]);
        assert!(emit(&mut agent, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_empty());
        assert_eq!(
            emit(&mut agent, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            ["3 responses for id 1 but 2 requests read"]
        );
        assert!(agent.settle(0, 0, true).is_some(), "more answers than requests");
    }

    #[test]
    fn sessions_past_the_cap_are_a_violation_and_then_not_judged() {
        let mut agent = WireCheck::new(Side::Agent, 1 << 20);
        let update = |s: &str| {
            format!(r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"{s}","update":{{}}}}}}"#)
        };
        for n in 0..MAX_ANNOUNCED {
            agent.consumed(request(n, "session/new", "{}").as_bytes());
            let answer = format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{"sessionId":"s{n}"}}}}"#);
            assert!(emit(&mut agent, &answer).is_empty());
        }
        assert!(emit(&mut agent, &update("s0")).is_empty());
        assert_eq!(emit(&mut agent, &update("never")), ["session/update for `never` before the session was announced"]);
        // Announced again: no new session.
        let n = MAX_ANNOUNCED;
        agent.consumed(request(n, "session/load", r#"{"sessionId":"s1"}"#).as_bytes());
        assert!(emit(&mut agent, &format!(r#"{{"jsonrpc":"2.0","id":{n},"result":{{}}}}"#)).is_empty());
        // One more is not remembered: a violation, and from then on updates of sessions not
        // remembered are not judged.
        let mut methods = Vec::new();
        agent.consumed(request(n + 1, "session/new", "{}").as_bytes());
        let over = format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"sessionId":"over"}}}}"#, n + 1);
        let found = agent.emitted(format!("{over}\n").as_bytes(), &mut |a| methods.push(a.method));
        assert_eq!(found, [Violation::TooManySessions { session: "over".into() }]);
        assert_eq!(methods, ["session/new"], "the caller still hears of the answer");
        assert!(found[0].to_string().contains("past the 16384 sessions the check remembers"), "{}", found[0]);
        assert_eq!(agent.announced.len(), MAX_ANNOUNCED);
        assert!(emit(&mut agent, &update("over")).is_empty());
        assert!(emit(&mut agent, &update("never")).is_empty());
        assert!(agent.settle(0, 0, false).is_none());
    }
}
