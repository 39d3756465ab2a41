//! Wire-level checks: what one peer emitted and consumed, compared frame by frame.
//!
//! Each [`WireCheck`] watches one peer: the bytes it **emitted** (every frame must be a valid
//! JSON-RPC 2.0 message) and the bytes it **consumed** (mirrored through the same framer, so the
//! checker knows exactly which requests the peer has read). From those it checks:
//!
//! * no more responses for an id than requests with that id were consumed, and, once the run
//!   settles, that every consumed request was answered exactly once except the duplicates the
//!   peer reports having dropped;
//! * agent side: no `session/update` for a session before a successful `session/new`
//!   (`load`/`resume`) response announced it (history replay during a load excepted), and no
//!   `fs/*` or `terminal/*` request unless the client advertised it;
//! * agent side: a prompt whose turn was cancelled by `session/cancel` is answered `cancelled`.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use acp_proto::RequestId;
use acp_proto::framer::{FrameEvent, Framer};
use acp_proto::jsonrpc::{Incoming, parse};
use serde_json::Value;

use super::label_of;

/// A request the peer consumed and has not answered yet.
#[derive(Debug, Clone)]
struct Consumed {
    method: String,
    params: Value,
}

/// What one peer did on the wire.
#[derive(Debug)]
pub(super) struct WireCheck {
    /// Which peer, for messages.
    name: &'static str,
    mirror: Framer,
    /// Requests consumed per id (invalid frames that echo an id count too).
    requests: BTreeMap<RequestId, u64>,
    /// Responses emitted per id.
    responses: BTreeMap<RequestId, u64>,
    /// The latest request consumed per id, until answered.
    open: BTreeMap<RequestId, Consumed>,
    /// Frames consumed that can only be answered with `id: null`.
    null_answerable: u64,
    null_responses: u64,
    /// Agent: sessions announced on the wire.
    announced: BTreeSet<String>,
    /// Agent: the client's advertised capabilities, as seen in its initialize request.
    client_caps: Option<Value>,
    /// Agent: prompt labels whose response must say `cancelled`.
    must_cancel: BTreeSet<u64>,
    /// Totals.
    pub(super) requests_total: u64,
    /// Totals.
    pub(super) responses_total: u64,
    /// Frames emitted.
    pub(super) frames_emitted: u64,
}

impl WireCheck {
    /// A checker for the peer `name`, whose framer limit is `max_frame_len`.
    pub(super) fn new(name: &'static str, max_frame_len: usize) -> WireCheck {
        WireCheck {
            name,
            mirror: Framer::new(max_frame_len),
            requests: BTreeMap::new(),
            responses: BTreeMap::new(),
            open: BTreeMap::new(),
            null_answerable: 0,
            null_responses: 0,
            announced: BTreeSet::new(),
            client_caps: None,
            must_cancel: BTreeSet::new(),
            requests_total: 0,
            responses_total: 0,
            frames_emitted: 0,
        }
    }

    /// Records the client's capabilities (agent-side checker).
    pub(super) fn set_client_caps(&mut self, caps: Value) {
        self.client_caps = Some(caps);
    }

    /// Marks a prompt (by label) whose answer must be `cancelled`.
    pub(super) fn must_cancel(&mut self, label: u64) {
        self.must_cancel.insert(label);
    }

    /// Bytes the peer consumed (exactly what `handle_input` reported).
    pub(super) fn consumed(&mut self, bytes: &[u8]) {
        let mut frames = Vec::new();
        let n = self.mirror.push(bytes, |ev| {
            frames.push(match ev {
                FrameEvent::Frame(f) => Some(f.to_vec()),
                FrameEvent::Oversized { .. } => None,
            });
            ControlFlow::Continue(())
        });
        assert_eq!(n, bytes.len());
        for f in frames {
            self.consumed_frame(f.as_deref());
        }
    }

    /// The peer saw the end of its input.
    pub(super) fn consumed_eof(&mut self) {
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
        match parse(frame) {
            Incoming::Request { id, method, params } => {
                if id == RequestId::Null {
                    self.null_answerable += 1;
                    return;
                }
                let params: Value = params.map(|p| serde_json::from_str(p.get()).unwrap()).unwrap_or(Value::Null);
                *self.requests.entry(id.clone()).or_default() += 1;
                self.requests_total += 1;
                self.open.insert(id, Consumed { method: method.into_owned(), params });
            }
            Incoming::Invalid { id: RequestId::Null, .. } => self.null_answerable += 1,
            Incoming::Invalid { id, .. } => {
                *self.requests.entry(id.clone()).or_default() += 1;
                self.requests_total += 1;
                self.open.insert(id, Consumed { method: String::new(), params: Value::Null });
            }
            _ => {}
        }
    }

    /// Bytes the peer emitted (whole frames). Panics on a violation.
    pub(super) fn emitted(&mut self, bytes: &[u8], agent: bool) {
        assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "{}: output not newline-terminated", self.name);
        for frame in bytes.split(|b| *b == b'\n').filter(|f| !f.is_empty()) {
            self.frames_emitted += 1;
            let json: Value = serde_json::from_slice(frame)
                .unwrap_or_else(|e| panic!("{}: emitted a frame that is not JSON ({e})", self.name));
            assert_eq!(json["jsonrpc"], "2.0", "{}: frame without jsonrpc 2.0: {json}", self.name);
            match parse(frame) {
                Incoming::Request { method, .. } => {
                    if agent {
                        self.check_gated_request(&method, &json);
                    }
                }
                Incoming::Notification { method, .. } => {
                    if agent && method == "session/update" {
                        let s = json["params"]["sessionId"].as_str().unwrap_or_default();
                        let loading = self.open.values().any(|c| {
                            (c.method == "session/load" || c.method == "session/resume")
                                && c.params["sessionId"].as_str() == Some(s)
                        });
                        assert!(
                            self.announced.contains(s) || loading,
                            "{}: session/update for `{s}` before the session was announced",
                            self.name
                        );
                    }
                }
                Incoming::Response { id, outcome } => {
                    self.responses_total += 1;
                    if id == RequestId::Null {
                        self.null_responses += 1;
                        assert!(
                            self.null_responses <= self.null_answerable,
                            "{}: more id-null responses than unanswerable frames",
                            self.name
                        );
                        continue;
                    }
                    let n = self.responses.entry(id.clone()).or_default();
                    *n += 1;
                    let consumed = self.requests.get(&id).copied().unwrap_or(0);
                    assert!(*n <= consumed, "{}: {n} responses for id {id} but {consumed} requests read", self.name);
                    if let Some(req) = self.open.remove(&id)
                        && agent
                    {
                        self.agent_answered(&req, outcome.ok().map(|r| serde_json::from_str(r.get()).unwrap()));
                    }
                }
                other => panic!("{}: emitted an invalid message {other:?}: {json}", self.name),
            }
        }
    }

    fn agent_answered(&mut self, req: &Consumed, result: Option<Value>) {
        match (req.method.as_str(), result) {
            ("session/new", Some(r)) => {
                if let Some(s) = r["sessionId"].as_str() {
                    self.announced.insert(s.to_owned());
                }
            }
            ("session/load" | "session/resume", Some(_)) => {
                if let Some(s) = req.params["sessionId"].as_str() {
                    self.announced.insert(s.to_owned());
                }
            }
            ("session/prompt", result) => {
                if let Some(label) = label_of(&req.params)
                    && self.must_cancel.contains(&label)
                {
                    let stop = result.as_ref().map(|r| r["stopReason"].clone());
                    assert_eq!(
                        stop,
                        Some(Value::from("cancelled")),
                        "{}: a turn cancelled by session/cancel was not answered `cancelled`",
                        self.name
                    );
                }
            }
            _ => {}
        }
    }

    fn check_gated_request(&self, method: &str, json: &Value) {
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
        assert!(allowed, "{}: sent {method} to a client that did not advertise it: {json}", self.name);
    }

    /// Final accounting once the run has settled: every consumed request was answered once,
    /// except the duplicates the peer dropped and those still in flight. After a close, requests
    /// in flight are never answered, so only "at most one" is checked.
    pub(super) fn settle(&self, duplicates_dropped: u64, in_flight: usize, closed: bool) {
        let answered = self.responses_total - self.null_responses;
        if closed {
            assert!(answered <= self.requests_total, "{}: more answers than requests", self.name);
            return;
        }
        assert_eq!(
            self.requests_total,
            answered + duplicates_dropped + in_flight as u64,
            "{}: {} requests read, {answered} answered, {duplicates_dropped} duplicates dropped, {in_flight} in flight",
            self.name,
            self.requests_total,
        );
    }
}
